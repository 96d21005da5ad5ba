/**
 * Question corrections on a results store (memory in the unit tier, DynamoDB Local in the
 * emulator tier): a person's correction wins over the model's status and answer in every read
 * of the questions, over later re-extractions and redactions; it follows the deletion of its
 * messages and forgets an erased corrector; a bad request names its field.
 */

import type { LLM } from "convoseg/extraction";
import { CorrectionError } from "convoseg/knowledge";
import { KnowledgeReader } from "convoseg/knowledge/read";
import type { Question, ResultStore } from "convoseg/knowledge/store";
import {
  type CorrectionRequest,
  correctQuestion,
  forgetCorrector,
  KnowledgeRedactor,
} from "convoseg/knowledge/write";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TEN_TEXTS } from "./fixtures.js";
import { extractorFor, FakeMessageStates, NOW, segmentAt, topicModel } from "./redaction.js";

const MINUTE = 60_000;
const WIFI = "s1-m5";

/**
 * {@link topicModel} with the questions of {@link TEN_TEXTS}: "anyone around?" (m3) unanswered,
 * "which #wifi chip is it" (m5) as `wifi` says (answered by m6 while it is there).
 */
function modelSaying(wifi: "answered" | "unanswered" | "unclear"): LLM {
  return {
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
        const answered = wifi === "answered" && intel !== undefined;
        questions.push({
          question: "Which wifi chip is it?",
          asked: chip,
          status: wifi,
          answer: answered ? "An Intel one." : null,
          answered_by: answered ? [intel] : [],
        });
      }
      return { ...reply, questions };
    },
  };
}

/** Every question of the channel, page by page of `limit`: all statuses, then each status. */
async function read(reader: KnowledgeReader, channel: string, limit = 50) {
  const pages = async (status?: Question["status"]) => {
    const found: Question[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: Question[]; cursor: string | null } = await reader.questions(channel, {
        limit,
        ...(status !== undefined && { status }),
        ...(cursor !== null && { cursor }),
      });
      found.push(...page.items);
      cursor = page.cursor;
    } while (cursor !== null);
    return found;
  };
  return {
    all: await pages(),
    answered: await pages("answered"),
    unanswered: await pages("unanswered"),
    unclear: await pages("unclear"),
  };
}

/** `runs`: the property's runs (fewer where a store is slow). */
export function describeCorrections(
  name: string,
  make: () => Promise<ResultStore>,
  runs = 25,
): void {
  describe(`question corrections on ${name}`, () => {
    async function extracted(channel: string, wifi: "answered" | "unanswered" = "answered") {
      const store = await make();
      const states = new FakeMessageStates();
      const { segment, messages } = segmentAt(channel, "s1", TEN_TEXTS, NOW - 60 * MINUTE);
      states.add(messages);
      await extractorFor(store, modelSaying(wifi)).extract(segment, messages);
      const reader = new KnowledgeReader({ store });
      const idOf = async (askedId: string) =>
        String((await read(reader, channel)).all.find((q) => q.askedId === askedId)?.id);
      const correct = async (request: Omit<CorrectionRequest, "channel">, at = NOW) =>
        (await correctQuestion(store, { channel, ...request }, { now: () => at })).question;
      const reextract = async (say: "answered" | "unanswered" | "unclear", left = messages) => {
        const current = segmentAt(channel, "s1", TEN_TEXTS, NOW - 60 * MINUTE).segment;
        const kept = left.filter((m) => !states.states_.get(m.id)?.deleted);
        const envelope: typeof current = {
          ...current,
          count: kept.length,
          first: { id: kept[0].id, ts: kept[0].ts },
          last: { id: kept[kept.length - 1].id, ts: kept[kept.length - 1].ts },
          messageIds: kept.map((m) => m.id),
        };
        await extractorFor(store, modelSaying(say)).extract(envelope, kept, { force: true });
      };
      return { store, states, reader, messages, idOf, correct, reextract };
    }

    it("a question marked answered shows so, with its answer, who and when, in every read, and after re-extractions", async () => {
      const { reader, idOf, correct, reextract } = await extracted("marked");
      const around = await idOf("s1-m3");
      const shown = await correct({
        questionId: around,
        action: "answered",
        answerId: "s1-m4",
        by: "U123",
      });
      expect(shown).toMatchObject({ status: "answered", answerIds: ["s1-m4"], corrected: true });
      const check = async () => {
        const pages = await read(reader, "marked");
        const mine = pages.all.find((q) => q.askedId === "s1-m3");
        expect(mine).toMatchObject({
          id: around,
          status: "answered",
          answerIds: ["s1-m4"],
          corrected: true,
          correction: { action: "answered", by: "U123", at: new Date(NOW).toISOString() },
        });
        expect(mine?.answer).toBeUndefined();
        // Moved: out of the model's status, into the corrected one; each question once.
        expect(pages.unanswered.map((q) => q.askedId)).toEqual([]);
        expect(pages.answered.map((q) => q.askedId)).toEqual(["s1-m3", WIFI]);
        expect(pages.all.map((q) => [q.askedId, q.status])).toEqual([
          ["s1-m3", "answered"],
          [WIFI, "answered"],
        ]);
      };
      await check();
      // Re-extracted: the model says unanswered again, twice; the person's word stands.
      await reextract("unanswered");
      await check();
      await reextract("unclear");
      await check();
    });

    it("reopened, a question is unanswered without the model's answer; hidden, it is in no read; pages of one see each once", async () => {
      const { reader, idOf, correct, reextract } = await extracted("reopen");
      const wifi = await idOf(WIFI);
      await correct({ questionId: wifi, action: "reopen" });
      let pages = await read(reader, "reopen", 1);
      expect(pages.all.map((q) => [q.askedId, q.status])).toEqual([
        ["s1-m3", "unanswered"],
        [WIFI, "unanswered"],
      ]);
      const reopened = pages.unanswered.find((q) => q.askedId === WIFI);
      expect(reopened).toMatchObject({ answerIds: [], corrected: true });
      expect(reopened?.answer).toBeUndefined();
      expect(reopened?.correction?.by).toBeUndefined();
      expect(pages.answered).toEqual([]);
      // A later correction of the same question replaces it.
      await correct({ questionId: wifi, action: "hidden", by: "ops" }, NOW + MINUTE);
      await reextract("answered");
      pages = await read(reader, "reopen", 1);
      expect(pages.all.map((q) => q.askedId)).toEqual(["s1-m3"]);
      expect([pages.answered, pages.unclear]).toEqual([[], []]);
      // Unhidden by marking it again.
      await correct({ questionId: wifi, action: "answered", answerId: "s1-m7" }, NOW + 2 * MINUTE);
      pages = await read(reader, "reopen", 1);
      expect(pages.answered.map((q) => [q.askedId, q.answerIds])).toEqual([[WIFI, ["s1-m7"]]]);
    });

    it("keeps the model's summary when the person's answer is one of the model's messages", async () => {
      const { reader, idOf, correct } = await extracted("same");
      await correct({ questionId: await idOf(WIFI), action: "answered", answerId: "s1-m6" });
      const [wifi] = (await read(reader, "same")).answered;
      expect(wifi).toMatchObject({
        answer: "An Intel one.",
        answerIds: ["s1-m6"],
        corrected: true,
      });
    });

    it("follows deletions: the answer's goes from the correction, the asking message's takes it", async () => {
      const { store, states, reader, idOf, correct } = await extracted("deleted");
      const redactor = new KnowledgeRedactor({ store, states });
      await correct({
        questionId: await idOf(WIFI),
        action: "answered",
        answerId: "s1-m7",
        by: "ann",
      });
      await correct({ questionId: await idOf("s1-m3"), action: "answered", answerId: "s1-m4" });
      await redactor.redact("deleted", [states.delete("s1-m7")]);
      const wifi = (await read(reader, "deleted")).all.find((q) => q.askedId === WIFI);
      expect(wifi).toMatchObject({
        status: "answered",
        answerIds: [],
        correction: { action: "answered", by: "ann", answerRemoved: true },
      });
      expect(JSON.stringify(await store.listCorrections("deleted"))).not.toContain('"s1-m7"');
      await redactor.redact("deleted", [states.delete("s1-m3")]);
      const left = await store.listCorrections("deleted");
      expect(left.map((c) => c.askedId)).toEqual([WIFI]);
    });

    it("forgets an erased corrector, by user id or by name in any case, and keeps the correction", async () => {
      const { store, reader, idOf, correct } = await extracted("erased");
      await correct({ questionId: await idOf(WIFI), action: "reopen", by: "U0ALICE" });
      await correct({
        questionId: await idOf("s1-m3"),
        action: "answered",
        answerId: "s1-m4",
        by: "Alice Z",
      });
      expect(await forgetCorrector(store, "erased", ["U0BOB"])).toBe(0);
      expect(await forgetCorrector(store, "erased", ["alice z", "U0ALICE"])).toBe(2);
      const { all } = await read(reader, "erased");
      expect(all.map((q) => [q.askedId, q.status, q.correction?.by])).toEqual([
        ["s1-m3", "answered", undefined],
        [WIFI, "unanswered", undefined],
      ]);
      expect(JSON.stringify(await store.listCorrections("erased"))).not.toMatch(/alice/i);
    });

    it("refuses a bad request, naming the field, and a question or answer not in the channel", async () => {
      const { store, idOf, correct } = await extracted("bad");
      const wifi = await idOf(WIFI);
      const refused = async (request: Omit<CorrectionRequest, "channel">, field: string) => {
        const error = await correct(request).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(CorrectionError);
        expect((error as CorrectionError).field).toBe(field);
        expect((error as CorrectionError).message).toContain(field);
        return error as CorrectionError;
      };
      await refused({ questionId: wifi, action: "closed" as "reopen" }, "action");
      await refused({ questionId: "no such id", action: "reopen" }, "questionId");
      await refused({ questionId: wifi, action: "answered" }, "answerId");
      await refused({ questionId: wifi, action: "reopen", answerId: "s1-m4" }, "answerId");
      await refused({ questionId: wifi, action: "hidden", by: " " }, "by");
      const missing = await refused({ questionId: "0".repeat(32), action: "reopen" }, "questionId");
      expect(missing.code).toBe("KNOWLEDGE_QUESTION_NOT_FOUND");
      const answer = { questionId: wifi, action: "answered", answerId: "gone" } as const;
      const noMessages = { messages: { getMessages: async () => [] } };
      const elsewhere = await correctQuestion(store, { channel: "elsewhere", ...answer }).catch(
        (e: unknown) => e,
      );
      expect((elsewhere as CorrectionError).code).toBe("KNOWLEDGE_QUESTION_NOT_FOUND");
      const gone = await correctQuestion(store, { channel: "bad", ...answer }, noMessages).catch(
        (e: unknown) => e,
      );
      expect(gone).toMatchObject({ code: "KNOWLEDGE_ANSWER_NOT_FOUND", field: "answerId" });
    });

    it("a correction wins over any sequence of re-extractions and redactions of other messages", async () => {
      const action = fc.constantFrom("answered", "reopen", "hidden");
      const step = fc.oneof(
        fc.record({ reextract: fc.constantFrom("answered", "unanswered", "unclear") }),
        fc.record({ delete: fc.constantFrom(0, 1, 2, 3, 4, 6, 7, 8, 9) }),
      );
      let run = 0;
      await fc.assert(
        fc.asyncProperty(action, fc.array(step, { maxLength: 6 }), async (said, steps) => {
          // A channel per run: a store may be shared by the runs.
          const channel = `prop-${run++}`;
          const { store, states, reader, idOf, correct, reextract } = await extracted(channel);
          const redactor = new KnowledgeRedactor({ store, states });
          await correct({
            questionId: await idOf(WIFI),
            action: said,
            ...(said === "answered" && { answerId: "s1-m7" }),
          });
          for (const s of steps) {
            if ("reextract" in s) await reextract(s.reextract);
            else if (!states.states_.get(`s1-m${s.delete}`)?.deleted) {
              await redactor.redact(channel, [states.delete(`s1-m${s.delete}`)]);
            }
          }
          // A redaction may leave the result waiting for its re-extraction: one more, as sent.
          await reextract("unclear");
          const { all } = await read(reader, channel);
          const wifi = all.filter((q) => q.askedId === WIFI);
          if (said === "hidden") {
            expect(wifi).toEqual([]);
            return;
          }
          const m7Gone = states.states_.get("s1-m7")?.deleted === true;
          expect(wifi).toHaveLength(1);
          expect(wifi[0]).toMatchObject({
            status: said === "answered" ? "answered" : "unanswered",
            answerIds: said === "answered" && !m7Gone ? ["s1-m7"] : [],
            corrected: true,
          });
        }),
        { numRuns: runs },
      );
    });
  });
}
