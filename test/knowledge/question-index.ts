/**
 * The question index on a results store: what every `ResultStore` must do (the memory double in
 * the unit tier, DynamoDB in the emulator tier): entries written with the result, moved when a
 * status changes, removed with the questions, redactions followed, pages read oldest first.
 */

import { KnowledgeReader } from "convoseg/knowledge/read";
import type { ResultStore, SegmentResult, StoredQuestion } from "convoseg/knowledge/store";
import { describe, expect, it } from "vitest";
import { segmentResult } from "../support/segment-result.js";

const T0 = Date.UTC(2026, 5, 1);

export function question(
  id: string,
  askedTs: number,
  status: StoredQuestion["status"] = "unanswered",
  extra: Partial<StoredQuestion> = {},
): StoredQuestion {
  return {
    id,
    question: `how do I fix ${id}?`,
    status,
    askedId: `m-${id}`,
    askedTs,
    askedBy: "ann",
    answerIds: [],
    ...extra,
  };
}

export function resultWith(
  channel: string,
  segmentId: string,
  questions: StoredQuestion[] | undefined,
  extra: Partial<SegmentResult> = {},
): SegmentResult {
  return segmentResult(channel, segmentId, {
    first: { id: "m1", ts: T0 },
    last: { id: "m2", ts: T0 + 1000 },
    model: "test-model",
    extractedAt: new Date(T0 + 5000).toISOString(),
    ...(questions !== undefined && { questions }),
    ...extra,
  });
}

/** Saves `result` through a lease, as extraction does. */
export async function save(
  store: ResultStore,
  result: SegmentResult,
  previous?: SegmentResult,
): Promise<void> {
  const owner = `owner-${result.extractedAt}`;
  await store.acquireLease(result.channel, result.segmentId, {
    owner,
    now: Date.now(),
    leaseMs: 60_000,
    expiresAt: Date.now() + 3_600_000,
  });
  await store.saveResult(result, [], previous, owner);
}

const ids = (page: { entries: { id: string }[] }) => page.entries.map((e) => e.id);

export function describeQuestionIndex(name: string, makeStore: () => Promise<ResultStore>): void {
  let channels = 0;
  const channel = () => `${name}-questions-${++channels}-${Date.now()}`;

  describe(`${name}: question index`, () => {
    it("lists a status's questions oldest first across segments, and all of them by status", async () => {
      const store = await makeStore();
      const c = channel();
      await save(
        store,
        resultWith(c, "s1", [question("a", T0 + 300), question("b", T0 + 100, "answered")]),
      );
      await save(store, resultWith(c, "s2", [question("c", T0 + 200), question("d", T0 + 50)]));
      await save(store, resultWith(c, "s3", undefined));
      const unanswered = await store.listQuestions(c, { status: "unanswered", limit: 10 });
      expect(ids(unanswered)).toEqual(["d", "c", "a"]);
      expect(unanswered.next).toBeNull();
      expect(unanswered.entries[0]).toMatchObject({ channel: c, segmentId: "s2", v: 1 });
      const all = await store.listQuestions(c, { limit: 10 });
      expect(ids(all)).toEqual(["b", "d", "c", "a"]);
    });

    it("pages with `after`, saying where the next page starts only when one follows", async () => {
      const store = await makeStore();
      const c = channel();
      await save(
        store,
        resultWith(
          c,
          "s1",
          [1, 2, 3, 4, 5].map((i) => question(`q${i}`, T0 + i)),
        ),
      );
      const first = await store.listQuestions(c, { status: "unanswered", limit: 2 });
      expect(ids(first)).toEqual(["q1", "q2"]);
      expect(first.next).not.toBeNull();
      const after = first.next ?? "";
      const second = await store.listQuestions(c, { status: "unanswered", limit: 2, after });
      expect(ids(second)).toEqual(["q3", "q4"]);
      const last = await store.listQuestions(c, {
        status: "unanswered",
        limit: 2,
        after: second.next ?? "",
      });
      expect(ids(last)).toEqual(["q5"]);
      expect(last.next).toBeNull();
      const exact = await store.listQuestions(c, { status: "unanswered", limit: 5 });
      expect(exact.next).toBeNull();
    });

    it("moves an entry whose status changed and drops those a re-extraction no longer has", async () => {
      const store = await makeStore();
      const c = channel();
      const first = resultWith(c, "s1", [question("a", T0 + 1), question("b", T0 + 2)], {
        expiresAt: 2_000_000_000,
      });
      await save(store, first);
      const again = resultWith(
        c,
        "s1",
        [question("a", T0 + 1, "answered", { answer: "reboot", answerIds: ["m2"] })],
        { extractedAt: new Date(T0 + 9000).toISOString(), expiresAt: 2_000_000_000 },
      );
      await save(store, again, first);
      expect(ids(await store.listQuestions(c, { status: "unanswered", limit: 10 }))).toEqual([]);
      const answered = await store.listQuestions(c, { limit: 10 });
      expect(answered.entries).toEqual([
        expect.objectContaining({
          id: "a",
          status: "answered",
          answer: "reboot",
          extractedAt: again.extractedAt,
          expiresAt: 2_000_000_000,
        }),
      ]);
      // Saved again (a redelivery): the same one entry, never two.
      await save(store, again, again);
      expect(ids(await store.listQuestions(c, { limit: 10 }))).toEqual(["a"]);
    });

    it("follows a redaction's questions, and refuses a redaction of a stale result", async () => {
      const store = await makeStore();
      const c = channel();
      const r0 = resultWith(c, "s1", [question("a", T0 + 1), question("b", T0 + 2)]);
      await save(store, r0);
      const r1: SegmentResult = {
        ...r0,
        questions: [{ ...question("a", T0 + 1), status: "unclear" }],
        redactions: 1,
      };
      expect(await store.saveRedaction(r0, plan(r1))).toBe(true);
      expect(ids(await store.listQuestions(c, { status: "unanswered", limit: 10 }))).toEqual([]);
      expect(ids(await store.listQuestions(c, { status: "unclear", limit: 10 }))).toEqual(["a"]);
      // Planned on r0 again: r1 was written since, so nothing of it is.
      const stale: SegmentResult = { ...r0, questions: [], redactions: 1 };
      expect(await store.saveRedaction(r0, plan(stale))).toBe(false);
      expect(ids(await store.listQuestions(c, { limit: 10 }))).toEqual(["a"]);
      // Every message deleted: the result and its entries go.
      expect(await store.saveRedaction(r1, { ...plan(undefined) })).toBe(true);
      expect(ids(await store.listQuestions(c, { limit: 10 }))).toEqual([]);
      expect(await store.getResult(c, "s1")).toBeUndefined();
    });

    it("writes nothing of a redaction planned on a result re-extracted since", async () => {
      const store = await makeStore();
      const c = channel();
      const r0 = resultWith(c, "s1", [question("a", T0 + 1), question("b", T0 + 2)]);
      await save(store, r0);
      const again = resultWith(c, "s1", [question("c", T0 + 3)], {
        extractedAt: new Date(T0 + 60_000).toISOString(),
      });
      await save(store, again, r0);
      const redacted: SegmentResult = { ...r0, questions: [question("a", T0 + 1)], redactions: 1 };
      expect(await store.saveRedaction(r0, plan(redacted))).toBe(false);
      const page = await store.listQuestions(c, { limit: 10 });
      expect(ids(page)).toEqual(["c"]);
      expect(page.entries[0].extractedAt).toBe(again.extractedAt);
    });

    it("reads pages through the reader with an opaque cursor, and refuses a bad one", async () => {
      const store = await makeStore();
      const reader = new KnowledgeReader({ store });
      const c = channel();
      await save(store, resultWith(c, "s1", [question("x", T0 + 2), question("y", T0 + 1)]));
      await save(
        store,
        resultWith(c, "s2", [question("z", T0 + 3, "answered", { answer: "yes" })], {
          thread: "root-1",
        }),
      );
      const first = await reader.questions(c, { status: "unanswered", limit: 1 });
      expect(first.items.map((q) => q.askedId)).toEqual(["m-y"]);
      expect(first.cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      const second = await reader.questions(c, {
        status: "unanswered",
        limit: 1,
        cursor: first.cursor ?? "",
      });
      expect(second.items.map((q) => q.askedId)).toEqual(["m-x"]);
      expect(second.cursor).toBeNull();
      const answered = await reader.questions(c, { status: "answered" });
      expect(answered.items).toEqual([
        {
          id: "z",
          question: "how do I fix z?",
          askedId: "m-z",
          askedTs: T0 + 3,
          askedBy: "ann",
          status: "answered",
          answer: "yes",
          answerIds: [],
          segmentId: "s2",
          threadId: "root-1",
        },
      ]);
      for (const bad of ["not base64!", Buffer.from("topic#abc").toString("base64url")]) {
        await expect(reader.questions(c, { cursor: bad })).rejects.toMatchObject({
          code: "KNOWLEDGE_BAD_CURSOR",
          message: expect.stringContaining("cursor"),
        });
      }
      // A cursor of one status is no cursor of another.
      await expect(
        reader.questions(c, { status: "answered", cursor: first.cursor ?? "" }),
      ).rejects.toMatchObject({ code: "KNOWLEDGE_BAD_CURSOR" });
      await expect(reader.questions(c, { limit: 0 })).rejects.toMatchObject({
        code: "KNOWLEDGE_BAD_QUESTION_LIMIT",
      });
    });
  });
}

function plan(next: SegmentResult | undefined) {
  return { next, supports: [], removedTopics: [], windows: [] };
}
