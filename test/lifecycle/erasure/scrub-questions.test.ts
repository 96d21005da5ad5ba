/**
 * Erasing a person also removes the questions of results that keep them: those they asked, and
 * those whose words name them (issue 25 §1; a redaction of their messages does the rest).
 */

import type { SegmentResult, StoredQuestion } from "convoseg/knowledge/store";
import { describe, expect, it } from "vitest";
import { scrubPlan } from "../../../lib/lifecycle/erasure/scrub.js";

const question = (id: string, fields: Partial<StoredQuestion> = {}): StoredQuestion => ({
  id,
  question: "how do I reset it?",
  status: "answered",
  askedId: `m-${id}`,
  askedTs: 1,
  askedBy: "bo",
  answer: "hold the button",
  answerIds: ["m9"],
  ...fields,
});

const result = (questions: StoredQuestion[] | undefined): SegmentResult => ({
  v: 1,
  channel: "help",
  segmentId: "s",
  late: false,
  belongsAfter: null,
  count: 2,
  first: { id: "m0", ts: 0 },
  last: { id: "m9", ts: 9 },
  model: "m",
  promptVersion: "3/test",
  extractedAt: "2026-01-01T00:00:00.000Z",
  usage: { calls: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
  candidates: [],
  ...(questions === undefined ? {} : { questions }),
});

describe("scrubbing a person's name from questions", () => {
  it("removes the questions they asked or whose question or answer names them", () => {
    const kept = question("kept");
    const plan = scrubPlan(
      result([
        question("asked", { askedBy: "ana" }),
        question("named", { question: "did Ana fix it?" }),
        question("answer", { answer: "ask ana, she knows" }),
        kept,
      ]),
      ["ana"],
    );
    expect(plan?.next.questions).toEqual([kept]);
    expect(plan?.questionsRemoved).toBe(3);
  });

  it("changes nothing when no question names them, and leaves an old result without questions", () => {
    expect(scrubPlan(result([question("a")]), ["ana"])).toBeUndefined();
    expect(scrubPlan(result(undefined), ["ana"])).toBeUndefined();
    expect(
      scrubPlan(result([question("banana", { answer: "a banana" })]), ["ana"]),
    ).toBeUndefined();
  });
});
