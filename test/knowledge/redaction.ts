/**
 * Redaction's contract, for every results store: a deleted or edited message found from its
 * timestamp, its result, topic entries and window replies following it, idempotently, and
 * nothing of another segment touched.
 */

import { Analyzer, type LLM } from "convoseg/extraction";
import type {
  MessageChange,
  MessageState,
  MessageStates,
  ResultStore,
  SegmentEnvelope,
} from "convoseg/knowledge/store";
import { KnowledgeRedactor, promptVersionOf, SegmentExtractor } from "convoseg/knowledge/write";
import { type InlineMessage, parseSegmentBody } from "convoseg/pipeline/contract";
import { describe, expect, it } from "vitest";
import { planRedaction } from "../../lib/knowledge/store/redaction-plan.js";
import { ANALYSIS, TEN_TEXTS, topicsOfPrompt } from "./fixtures.js";

export const NOW = Date.UTC(2026, 6, 1);
const MINUTE = 60_000;

/** A model in process: each window's `#topics`, with the turns that mention them. */
export const topicModel: LLM = {
  async chatJSON(messages) {
    const prompt = messages.find((m) => m.role === "user")?.content ?? "";
    return {
      candidates: topicsOfPrompt(prompt).map(({ topic, range }) => ({
        topic,
        reason: `talked about ${topic}`,
        confidence: 0.9,
        tags: [topic],
        turn_range: range,
        subjective: false,
      })),
    };
  },
};

/** A segment of `texts` a minute apart from `start`, authors alice, bob, alice, … */
export function segmentAt(
  channel: string,
  segmentId: string,
  texts: readonly string[],
  start: number,
  late = false,
): { segment: SegmentEnvelope & { messageIds: string[] }; messages: InlineMessage[] } {
  const messages = texts.map((text, i) => ({
    id: `${segmentId}-m${i}`,
    ts: start + i * MINUTE,
    author: i % 2 === 0 ? "alice" : "bob",
    text,
  }));
  const first = messages[0];
  const last = messages[messages.length - 1];
  return {
    segment: {
      segmentId,
      channel,
      late,
      belongsAfter: null,
      count: messages.length,
      first: { id: first.id, ts: first.ts },
      last: { id: last.id, ts: last.ts },
      messageIds: messages.map((m) => m.id),
    },
    messages,
  };
}

/** The message store's states in memory: what ingestion's edits and deletions leave. */
export class FakeMessageStates implements MessageStates {
  readonly states_ = new Map<string, MessageState>();
  calls: { ids: readonly string[]; consistent: boolean }[] = [];
  /** Runs after each call has read, before it returns (a change landing just then). */
  afterCall?: (call: number) => Promise<void>;

  add(messages: readonly InlineMessage[]): void {
    for (const m of messages) {
      this.states_.set(m.id, { deleted: false, ts: m.ts, text: m.text, author: m.author });
    }
  }

  delete(id: string): MessageChange {
    const state = this.states_.get(id);
    if (state === undefined) throw new Error(`no message ${id}`);
    this.states_.set(id, { deleted: true, ts: state.ts });
    return { id, ts: state.ts, kind: "delete" };
  }

  edit(id: string, text: string, editedAt: number): MessageChange {
    const state = this.states_.get(id);
    if (state === undefined) throw new Error(`no message ${id}`);
    this.states_.set(id, { ...state, text, editedAt });
    return { id, ts: state.ts, kind: "edit" };
  }

  async states(
    _channel: string,
    ids: readonly string[],
    options: { consistent?: boolean } = {},
  ): Promise<Map<string, MessageState>> {
    this.calls.push({ ids, consistent: options.consistent ?? false });
    const found = new Map<string, MessageState>();
    for (const id of ids) {
      const state = this.states_.get(id);
      if (state !== undefined) found.set(id, structuredClone(state));
    }
    await this.afterCall?.(this.calls.length);
    return found;
  }
}

/**
 * {@link topicModel}, and the questions of {@link TEN_TEXTS}: "anyone around?" (m3) unanswered,
 * "which #wifi chip is it" (m5) answered by m6.
 */
export const questionModel: LLM = {
  async chatJSON(messages, options) {
    const reply = (await topicModel.chatJSON(messages, options)) as Record<string, unknown>;
    const prompt = messages.find((m) => m.role === "user")?.content ?? "";
    const turnOf = (text: string) => {
      const line = prompt.split("\n").find((l) => l.startsWith("Turn ") && l.includes(text));
      return line === undefined ? undefined : Number(line.split(" ")[1]);
    };
    const questions = [];
    const around = turnOf("anyone around?");
    if (around !== undefined) {
      questions.push({
        question: "anyone around?",
        asked: around,
        status: "unanswered",
        answer: null,
        answered_by: [],
      });
    }
    const chip = turnOf("which #wifi chip");
    const intel = turnOf("an intel one");
    if (chip !== undefined) {
      questions.push({
        question: "Which wifi chip is it?",
        asked: chip,
        status: intel === undefined ? "unanswered" : "answered",
        answer: intel === undefined ? null : "An Intel one.",
        answered_by: intel === undefined ? [] : [intel],
      });
    }
    return { ...reply, questions };
  },
};

export function extractorFor(store: ResultStore, llm: LLM = topicModel): SegmentExtractor {
  return new SegmentExtractor({
    store,
    extractor: new Analyzer(llm, { ...ANALYSIS, maxConcurrency: 1 }),
    model: "m",
    promptVersion: promptVersionOf(ANALYSIS),
    now: () => NOW,
    owner: () => "owner",
  });
}

/** A store whose items of a channel can be listed whole (for "nothing is left" checks). */
export interface RedactionFixture {
  store: ResultStore;
  /** Every item of the channel, as JSON. */
  dump(channel: string): Promise<string>;
  windows(channel: string): Promise<number>;
}

export function describeRedaction(name: string, make: () => Promise<RedactionFixture>): void {
  describe(`redaction on ${name}`, () => {
    async function extracted(channel: string, llm: LLM = topicModel) {
      const fixture = await make();
      const states = new FakeMessageStates();
      const { segment, messages } = segmentAt(channel, "s1", TEN_TEXTS, NOW - 60 * MINUTE);
      states.add(messages);
      await extractorFor(fixture.store, llm).extract(segment, messages);
      const redactor = new KnowledgeRedactor({ store: fixture.store, states });
      return { ...fixture, states, redactor, messages };
    }

    it("removes a candidate whose evidence was all deleted, shrinks the others, and deletes the segment's windows", async () => {
      const { store, states, redactor, dump, windows } = await extracted("del");
      expect(await windows("del")).toBe(3);
      // #kernel is m8-m9; #wifi is m4-m7, whose first message (alice's) goes too.
      const changes = ["s1-m8", "s1-m9", "s1-m4"].map((id) => states.delete(id));
      const counts = await redactor.redact("del", changes);
      expect(counts).toEqual({
        results: 1,
        candidatesRemoved: 1,
        questionsRemoved: 0,
        topicEntriesUpdated: 1,
        topicEntriesDeleted: 1,
        windowsDeleted: 3,
        reextractionsRequested: 0,
        termSegmentsWithdrawn: 0,
      });
      const result = await store.getResult("del", "s1");
      expect(result?.messageIds).toEqual(
        ["m0", "m1", "m2", "m3", "m5", "m6", "m7"].map((m) => `s1-${m}`),
      );
      expect(result?.candidates.map((c) => [c.topic, c.turnRange, c.messageIds])).toEqual([
        ["grub", [0, 2], ["s1-m0", "s1-m2"]],
        ["wifi", [4, 6], ["s1-m5", "s1-m7"]],
      ]);
      // m5 and m7 are bob's, m6 alice's: recounted without the deleted message.
      expect(result?.candidates[1].authors).toEqual(["bob", "alice"]);
      // count, the bounds and messageIds agree, as a segment message must (reextract sends one).
      expect([result?.count, result?.deletedSince, result?.changedMessages]).toEqual([7, 3, 3]);
      const supports = await store.listSupports("del");
      expect(supports.map((s) => s.normalizedTopic).sort()).toEqual(["grub", "wifi"]);
      const wifi = supports.find((s) => s.normalizedTopic === "wifi");
      expect(wifi?.messageIds).toEqual(["s1-m5", "s1-m7"]);
      expect(wifi?.firstTs).toBe(states.states_.get("s1-m5")?.ts);
      expect(await windows("del")).toBe(0);
      const items = await dump("del");
      for (const id of ["s1-m8", "s1-m9", "s1-m4"]) expect(items).not.toContain(`"${id}"`);

      // The same changes again touch nothing.
      expect(await redactor.redact("del", changes)).toEqual({
        results: 0,
        candidatesRemoved: 0,
        questionsRemoved: 0,
        topicEntriesUpdated: 0,
        topicEntriesDeleted: 0,
        windowsDeleted: 0,
        reextractionsRequested: 0,
        termSegmentsWithdrawn: 0,
      });
      expect(await dump("del")).toBe(items);
    });

    it("counts the questions a deletion removes: the asking message's, then a removed result's", async () => {
      const { store, states, messages } = await extracted("asked", questionModel);
      const metrics = new Map<string, number>();
      const redactor = new KnowledgeRedactor({
        store,
        states,
        metrics: { add: (name, value) => metrics.set(name, (metrics.get(name) ?? 0) + value) },
      });
      const asked = (await store.getResult("asked", "s1"))?.questions;
      expect(asked?.map((q) => [q.askedId, q.answerIds])).toEqual([
        ["s1-m3", []],
        ["s1-m5", ["s1-m6"]],
      ]);
      expect(await redactor.redact("asked", [states.delete("s1-m3")])).toMatchObject({
        results: 1,
        questionsRemoved: 1,
      });
      expect(metrics.get("QuestionsRedacted")).toBe(1);
      const left = (await store.getResult("asked", "s1"))?.questions;
      expect(left?.map((q) => q.askedId)).toEqual(["s1-m5"]);
      // An answer deleted leaves its question, unclear: none removed.
      expect(await redactor.redact("asked", [states.delete("s1-m6")])).toMatchObject({
        results: 1,
        questionsRemoved: 0,
      });
      expect((await store.getResult("asked", "s1"))?.questions?.[0].status).toBe("unclear");
      // Every message deleted: the result goes, with the question it still held.
      const rest = messages.filter((m) => !["s1-m3", "s1-m6"].includes(m.id));
      const counts = await redactor.redact(
        "asked",
        rest.map((m) => states.delete(m.id)),
      );
      expect(counts).toMatchObject({ results: 1, questionsRemoved: 1 });
      expect(await store.getResult("asked", "s1")).toBeUndefined();
    });

    it("moves the result's bounds off a deleted first message, and removes a result whose messages were all deleted", async () => {
      const { store, states, redactor, dump, messages } = await extracted("bounds");
      await redactor.redact("bounds", [states.delete("s1-m0")]);
      const result = await store.getResult("bounds", "s1");
      expect(result?.first).toEqual({ id: "s1-m1", ts: messages[1].ts });
      expect(result?.candidates[0].messageIds).toEqual(["s1-m1", "s1-m2"]);

      const counts = await redactor.redact(
        "bounds",
        messages.slice(1).map((m) => states.delete(m.id)),
      );
      expect(counts).toMatchObject({ results: 1, candidatesRemoved: 3, topicEntriesDeleted: 3 });
      expect(await store.getResult("bounds", "s1")).toBeUndefined();
      expect(await store.listSupports("bounds")).toEqual([]);
      for (const m of messages) expect(await dump("bounds")).not.toContain(`"${m.id}"`);
    });

    it("deletes the windows on an edit and keeps the candidates, counting the message once", async () => {
      const { store, states, redactor, windows } = await extracted("edit");
      const before = await store.getResult("edit", "s1");
      const edit = states.edit("s1-m1", "use grub-install instead", NOW + 1);
      expect(await redactor.redact("edit", [edit])).toMatchObject({
        results: 1,
        windowsDeleted: 3,
        candidatesRemoved: 0,
        topicEntriesUpdated: 0,
      });
      const after = await store.getResult("edit", "s1");
      expect(after?.candidates).toEqual(before?.candidates);
      expect(after?.edits).toEqual({ "s1-m1": NOW + 1 });
      expect(after?.changedMessages).toBe(1);
      expect(await windows("edit")).toBe(0);
      expect((await redactor.redact("edit", [edit])).results).toBe(0);
      // A later edit of the same message is recorded, but it was counted already.
      await redactor.redact("edit", [states.edit("s1-m1", "or grub2-install", NOW + 2)]);
      expect((await store.getResult("edit", "s1"))?.changedMessages).toBe(1);
    });

    it("finds the segment from the change's time: others, late ones overlapping it included, are left as they were", async () => {
      const fixture = await make();
      const states = new FakeMessageStates();
      const extractor = extractorFor(fixture.store);
      const segments = [0, 1, 2, 3].map((i) =>
        segmentAt("find", `t${i}`, ["a #boot issue", "fixed the #boot"], NOW + i * 10 * MINUTE),
      );
      // A late segment whose messages lie inside t1's time.
      const late = segmentAt("find", "late", ["my #dns is slow"], NOW + 10 * MINUTE + 30_000, true);
      for (const { segment, messages } of [...segments, late]) {
        states.add(messages);
        await extractor.extract(segment, messages);
      }
      const before = await fixture.store.listResults("find");
      const redactor = new KnowledgeRedactor({ store: fixture.store, states });
      const counts = await redactor.redact("find", [states.delete("late-m0")]);
      expect(counts).toMatchObject({ results: 1, candidatesRemoved: 1 });
      expect(await fixture.store.getResult("find", "late")).toBeUndefined();
      const after = await fixture.store.listResults("find");
      expect(after).toEqual(before.filter((r) => r.segmentId !== "late"));

      expect((await redactor.redact("find", [states.delete("t2-m1")])).results).toBe(1);
      expect((await fixture.store.getResult("find", "t2"))?.messageIds).toEqual(["t2-m0"]);
      expect((await fixture.store.getResult("find", "t1"))?.messageIds).toEqual(["t1-m0", "t1-m1"]);
    });

    it("asks once for a re-extraction when the changed share passes the setting", async () => {
      const { store, states } = await extracted("share");
      const asked: string[] = [];
      const redactor = new KnowledgeRedactor({
        store,
        states,
        reextractChangedShare: 0.25,
        requestReextraction: async (channel, segmentId) => {
          asked.push(`${channel}/${segmentId}`);
          // What `reextract` would send: the redacted result's segment, by reference.
          const result = await store.getResult(channel, segmentId);
          const body = parseSegmentBody(
            JSON.stringify({
              v: 1,
              segmentId,
              channel,
              late: result?.late,
              belongsAfter: result?.belongsAfter,
              count: result?.count,
              first: result?.first,
              last: result?.last,
              messageIds: result?.messageIds,
              reference: { table: "messages" },
            }),
          );
          expect(body.messageIds).toEqual(
            ["m1", "m2", "m4", "m6", "m7", "m8", "m9"].map((m) => `s1-${m}`),
          );
        },
      });
      const requested = [];
      for (const id of ["s1-m0", "s1-m3", "s1-m5", "s1-m6"]) {
        requested.push(
          (await redactor.redact("share", [states.delete(id)])).reextractionsRequested,
        );
      }
      // 2 of 10 is not more than a quarter, 3 of 10 is; the 4th asks no more.
      expect(requested).toEqual([0, 0, 1, 0]);
      expect(asked).toEqual(["share/s1"]);
    });

    it("does not let a redaction planned on an older extraction overwrite a re-extraction", async () => {
      const { store, states } = await extracted("stale");
      const r0 = await store.getResult("stale", "s1");
      if (r0 === undefined) throw new Error("no result");
      const plan = planRedaction(
        r0,
        ["s1-m8", "s1-m9", "s1-m4"].map((id) => states.delete(id)),
        states.states_,
        1,
      );
      if (plan === undefined) throw new Error("no plan");
      // A re-extraction (a minute later) writes its own entries and result first.
      const again = new SegmentExtractor({
        store,
        extractor: new Analyzer(topicModel, { ...ANALYSIS, maxConcurrency: 1 }),
        model: "m",
        promptVersion: promptVersionOf(ANALYSIS),
        now: () => NOW + MINUTE,
        owner: () => "owner",
      });
      const { segment, messages } = segmentAt("stale", "s1", TEN_TEXTS, NOW - 60 * MINUTE);
      await again.extract(segment, messages, { force: true });
      const supports = await store.listSupports("stale");
      expect(await store.saveRedaction(r0, plan)).toBe(false);
      expect(await store.listSupports("stale")).toEqual(supports);
      expect((await store.getResult("stale", "s1"))?.extractedAt).toBe(
        new Date(NOW + MINUTE).toISOString(),
      );
    });
  });
}
