/**
 * A result's questions (issue 25 §1): an extractor's questions stored with message ids and
 * stable ids, dropped before candidates when the item is too large, and redacted with the
 * messages that asked or answered them.
 */

import type { Candidate, Extractor, QuestionCandidate } from "convoseg/extraction";
import { KeyphraseExtractor } from "convoseg/extraction/offline";
import type { SegmentResult } from "convoseg/knowledge/store";
import { MemoryResultStore } from "convoseg/knowledge/store";
import { SegmentExtractor } from "convoseg/knowledge/write";
import { describe, expect, it } from "vitest";
import type { MessageState } from "../../lib/knowledge/store/message-states.js";
import { planRedaction } from "../../lib/knowledge/store/redaction-plan.js";
import { questionId } from "../../lib/knowledge/store/result-questions.js";
import type { StoredQuestion } from "../../lib/knowledge/store/schema/items.js";
import { fitResult, resultItemSize } from "../../lib/knowledge/write/result-fit.js";
import { segmentOf } from "./fixtures.js";

const answering = (questions: QuestionCandidate[], candidates: Candidate[] = []): Extractor => ({
  extract: async () => ({ candidates, questions }),
});

function extractorOf(extractor: Extractor) {
  const store = new MemoryResultStore();
  return {
    store,
    extractor: new SegmentExtractor({ store, extractor, model: "m", promptVersion: "3/test" }),
  };
}

const TEXTS = ["how do I reset it?", "joined", "hold the button", "which button?", "the red one"];

/** The segment of {@link TEXTS}, its second message a system line the extractor is not shown. */
function segment(id: string) {
  const { segment, messages } = segmentOf(id, TEXTS);
  messages[1] = { ...messages[1], kind: "system" };
  return { segment, messages };
}

describe("a result's questions", () => {
  it("stores them by message id, with a stable id, the asker and the answers in order", async () => {
    // Turn indexes into the four turns shown: the system line is not one of them.
    const questions: QuestionCandidate[] = [
      {
        question: "How do I reset it?",
        asked: 0,
        status: "answered",
        answer: "Hold it.",
        answeredBy: [3, 1],
      },
      { question: "Which button?", asked: 2, status: "answered", answer: "Red.", answeredBy: [] },
      { question: "past the turns", asked: 9, status: "unanswered", answeredBy: [] },
      {
        question: "answered before asked",
        asked: 3,
        status: "answered",
        answer: "x",
        answeredBy: [0],
      },
    ];
    const { extractor, store } = extractorOf(answering(questions));
    const { segment: s1, messages } = segment("s1");
    await extractor.extract(s1, messages);
    const stored = (await store.getResult("help", "s1")) as SegmentResult;
    expect(stored.questions).toEqual([
      {
        id: questionId("s1", "s1-m0", "how do i reset it"),
        question: "How do I reset it?",
        status: "answered",
        askedId: "s1-m0",
        askedTs: messages[0].ts,
        askedBy: "alice",
        answer: "Hold it.",
        answerIds: ["s1-m2", "s1-m4"],
      },
      expect.objectContaining({
        askedId: "s1-m3",
        askedBy: "bob",
        status: "unclear",
        answerIds: [],
      }),
      expect.objectContaining({ askedId: "s1-m4", status: "unclear", answerIds: [] }),
    ]);
    expect(stored.questions?.[1]).not.toHaveProperty("answer");
    expect(stored.trimmed).toEqual({ questions: 1 });
    // The same question of another segment has another id; of the same one, the same.
    const other = segment("s2");
    await extractor.extract(other.segment, other.messages);
    const again = (await store.getResult("help", "s2")) as SegmentResult;
    expect(again.questions?.[0].id).not.toBe(stored.questions?.[0].id);
    expect(questionId("s1", "s1-m0", "How do I   reset it?")).toBe(stored.questions?.[0].id);
  });

  it("stores an empty list when the extractor asks none, and the offline extractor's", async () => {
    const { extractor, store } = extractorOf({ extract: async () => ({ candidates: [] }) });
    const { segment: s3, messages } = segment("s3");
    await extractor.extract(s3, messages);
    expect((await store.getResult("help", "s3"))?.questions).toEqual([]);

    const offline = extractorOf(new KeyphraseExtractor());
    await offline.extractor.extract(s3, messages);
    const stored = (await offline.store.getResult("help", "s3")) as SegmentResult;
    expect(stored.questions?.map((q) => [q.askedId, q.status, q.answerIds])).toEqual([
      // Alice answers herself, then Bob asks back: unclear.
      ["s3-m0", "unclear", []],
      // The system line is not a turn the extractor counts: its turn 2 is the fourth message.
      ["s3-m3", "answered", ["s3-m4"]],
    ]);
  });

  it("drops the last asked questions before any candidate to fit the item, counting them", () => {
    const { segment: s5 } = segmentOf("s5", ["a"]);
    const question = (i: number): StoredQuestion => ({
      id: `q${i}`,
      question: "q".repeat(200),
      status: "answered",
      askedId: s5.first.id,
      askedTs: s5.first.ts,
      answer: "a".repeat(300),
      answerIds: [],
    });
    const result: SegmentResult = {
      v: 1,
      ...s5,
      model: "m",
      promptVersion: "3/test",
      extractedAt: "2026-01-01T00:00:00.000Z",
      usage: { calls: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      candidates: [
        {
          id: "c",
          topic: "t",
          reason: "r".repeat(500),
          confidence: 0.1,
          tags: [],
          subjective: false,
          turnRange: null,
          messageIds: null,
        },
      ],
      questions: Array.from({ length: 10 }, (_, i) => question(i)),
    };
    const whole = resultItemSize(result);
    const limit = whole - 1200;
    const fitted = fitResult(result, {}, limit);
    expect(resultItemSize(fitted)).toBeLessThanOrEqual(limit);
    expect(fitted.candidates).toHaveLength(1);
    const kept = fitted.questions?.length ?? 0;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(10);
    expect(fitted.questions).toEqual(result.questions?.slice(0, kept));
    expect(fitted.trimmed).toEqual({ oversizeQuestions: 10 - kept });
    // Too small for any question: all go, then candidates.
    const bare = { ...result, questions: [], candidates: [] };
    const tight = fitResult(result, {}, resultItemSize(bare) + 200);
    expect(tight.questions).toEqual([]);
    expect(tight.trimmed).toMatchObject({ oversizeQuestions: 10, oversizeCandidates: 1 });
  });
});

describe("redacting a result's questions", () => {
  const asked: StoredQuestion = {
    id: "q1",
    question: "How do I reset it?",
    status: "answered",
    askedId: "m0",
    askedTs: 0,
    askedBy: "alice",
    answer: "Hold it.",
    answerIds: ["m2", "m4"],
  };
  const other: StoredQuestion = {
    id: "q2",
    question: "Which button?",
    status: "answered",
    askedId: "m3",
    askedTs: 3,
    answer: "Red.",
    answerIds: ["m4"],
  };
  const result = (questions: StoredQuestion[], listed = true): SegmentResult => ({
    v: 1,
    channel: "help",
    segmentId: "s",
    late: false,
    belongsAfter: null,
    count: 5,
    first: { id: "m0", ts: 0 },
    last: { id: "m4", ts: 4 },
    ...(listed ? { messageIds: ["m0", "m1", "m2", "m3", "m4"] } : {}),
    model: "m",
    promptVersion: "3/test",
    extractedAt: "2026-01-01T00:00:00.000Z",
    usage: { calls: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    candidates: [],
    questions,
  });
  const states = (edited: string[] = [], deleted: string[] = []) =>
    new Map<string, MessageState>(
      ["m0", "m1", "m2", "m3", "m4"].map((id, ts) => [
        id,
        { ts, deleted: deleted.includes(id), ...(edited.includes(id) ? { editedAt: 100 } : {}) },
      ]),
    );

  it.each([true, false])(
    "drops a question whose asking message is deleted or edited (ids listed: %s)",
    (listed) => {
      for (const kind of ["delete", "edit"] as const) {
        const plan = planRedaction(
          result([asked, other], listed),
          [{ id: "m0", ts: 0, kind }],
          kind === "delete" ? states([], ["m0"]) : states(["m0"]),
          1,
        );
        expect(plan?.next?.questions).toEqual([other]);
      }
    },
  );

  it("removes deleted and edited answers, an answered question left with none reads unclear", () => {
    const plan = planRedaction(
      result([asked, other]),
      [
        { id: "m4", ts: 4, kind: "delete" },
        { id: "m2", ts: 2, kind: "edit" },
      ],
      states(["m2"], ["m4"]),
      1,
    );
    const { answer: _a, ...unanswered } = asked;
    const { answer: _b, ...rest } = other;
    expect(plan?.next?.questions).toEqual([
      { ...unanswered, status: "unclear", answerIds: [] },
      { ...rest, status: "unclear", answerIds: [] },
    ]);
    const one = planRedaction(
      result([asked]),
      [{ id: "m2", ts: 2, kind: "delete" }],
      states([], ["m2"]),
      1,
    );
    expect(one?.next?.questions).toEqual([{ ...asked, answerIds: ["m4"] }]);
  });

  it("leaves questions alone for a change to a message they do not name, and an old result without", () => {
    const plan = planRedaction(
      result([asked, other]),
      [{ id: "m1", ts: 1, kind: "delete" }],
      states([], ["m1"]),
      1,
    );
    expect(plan?.next?.questions).toEqual([asked, other]);
    const { questions: _q, ...old } = result([]);
    const before = planRedaction(old, [{ id: "m0", ts: 0, kind: "delete" }], states([], ["m0"]), 1);
    expect(before?.next).not.toHaveProperty("questions");
  });
});
