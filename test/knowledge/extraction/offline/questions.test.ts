/**
 * The offline extractor's questions (issue 25 §1): found by form and position, answered by a
 * reply or the next other voice, and the invariants any segment's questions keep.
 */

import type { ExtractionTurn, WindowOutput, WindowOutputs } from "convoseg/extraction";
import { MAX_ANSWER_CHARS, MAX_QUESTION_CHARS } from "convoseg/extraction/bounds";
import { KeyphraseExtractor } from "convoseg/extraction/offline";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  FOLLOW_TURNS,
  MAX_SEGMENT_QUESTIONS,
  offlineQuestions,
} from "../../../../lib/knowledge/extraction/offline/questions.js";

const turn = (
  author: string,
  text: string,
  fields: Partial<ExtractionTurn> = {},
): ExtractionTurn => ({ role: "user", kind: "user", author, text, ...fields });

describe("offline questions", () => {
  it("finds questions by their mark or their opening word, from people only", () => {
    const turns = [
      turn("ana", "the build broke again"),
      turn("ana", "how do I pin the compiler version"),
      turn("bot", "is the build green?", { kind: "bot" }),
      turn("srv", "who joined?", { kind: "system" }),
      turn("bo", "what?"),
      turn("bo", "see https://example.org/x?y=1 for it"),
      turn("cy", "The cache is stale. Did you clear it? I did."),
      turn(
        "dee",
        "what a day it has been for all of us in this channel, truly a long long day of builds and more",
      ),
      // A correction of one's last line (IRC's "*word"), not a question opening with "will".
      turn("eve", "*will be issued for"),
      // Unmarked, a clause, an exclamation and a subject left out are said, not asked (#ubuntu).
      turn("fay", "When I modprobe ath_pci I get the following error: FATAL: Module not found."),
      turn("fay", "what I did was chmod 000 them"),
      turn("gus", "what a pain in the ass"),
      turn("gus", "should be fine, just run apt-get update"),
      turn("gus", "should have written /deb ;)"),
      turn("gus", "when does the new release come out"),
    ];
    const asked = offlineQuestions(turns).map((q) => [q.asked, q.question]);
    expect(asked).toEqual([
      [1, "how do I pin the compiler version"],
      [6, "Did you clear it?"],
      [14, "when does the new release come out"],
    ]);
  });

  it("takes a reply to the question as its answer, and the next other voice failing one", () => {
    const turns = [
      turn("ana", "how do I reset the router?", { id: "m1" }),
      turn("bo", "no idea, sorry. ask cy"),
      turn("cy", "hold the button for ten seconds. Then wait.", { id: "m3", replyTo: "m1" }),
      turn("dee", "anyone up for lunch?", { id: "m4" }),
      turn("ana", "sure", { id: "m5" }),
    ];
    const [reset, lunch] = offlineQuestions(turns);
    expect(reset).toEqual({
      question: "how do I reset the router?",
      asked: 0,
      status: "answered",
      answer: "hold the button for ten seconds.",
      answeredBy: [2],
    });
    expect(lunch).toEqual({
      question: "anyone up for lunch?",
      asked: 3,
      status: "answered",
      answer: "sure",
      answeredBy: [4],
    });
  });

  it("takes a message addressing the asker by name as a reply, without the address", () => {
    const turns = [
      turn("ana", "where is the config file?"),
      turn("bo", "lunch soon"),
      turn("cy", "something else entirely"),
      turn("dee", "unrelated too"),
      turn("eve", "ana: it is in /etc/app.conf"),
    ];
    const [question] = offlineQuestions(turns);
    expect(question.status).toBe("answered");
    expect(question.answeredBy).toEqual([4]);
    expect(question.answer).toBe("it is in /etc/app.conf");
  });

  it("takes a message addressing the asker for the question they asked last, where its link says so", () => {
    // ana asks three things in a row; bo's one reply, linked to the last, answers only that one.
    const turns = [
      turn("ana", "how do I keep the card?", { id: "q1" }),
      turn("ana", "is the card id the same as the payment method?", { id: "q2" }),
      turn("ana", "what about old customers?", { id: "q3" }),
      turn("bo", "ana: old customers keep working", { id: "a", replyTo: "q3" }),
    ];
    expect(offlineQuestions(turns).map((q) => [q.asked, q.status, q.answeredBy])).toEqual([
      [0, "unclear", []],
      [1, "unclear", []],
      [2, "answered", [3]],
    ]);
    // Linked to the first question, it answers that one too; with no link, each of them.
    const toFirst = turns.map((t) => (t.id === "a" ? { ...t, replyTo: "q1" } : t));
    expect(offlineQuestions(toFirst).map((q) => q.status)).toEqual([
      "answered",
      "unclear",
      "answered",
    ]);
    const unlinked = turns.map((t) => (t.id === "a" ? { ...t, replyTo: undefined } : t));
    expect(offlineQuestions(unlinked).map((q) => q.status)).toEqual([
      "answered",
      "answered",
      "answered",
    ]);
  });

  it("does not take a message addressing another author for the answer, nor for a follow-up", () => {
    const turns = [
      turn("ana", "is the mirror down?"),
      turn("bo", "cy: did you push the fix"),
      turn("cy", "bo: yes, an hour ago"),
    ];
    expect(offlineQuestions(turns)[0]).toEqual(
      expect.objectContaining({ status: "unanswered", answeredBy: [] }),
    );
    const addressed = [turn("ana", "is the mirror down?"), turn("bo", "ana: it is back up")];
    expect(offlineQuestions(addressed)[0].answeredBy).toEqual([1]);
  });

  it("is unclear when only a question or the asker follows, unanswered when nothing does", () => {
    const clarified = offlineQuestions([
      turn("ana", "why does the test hang?"),
      turn("bo", "which test?"),
    ]);
    expect(clarified[0]).toEqual(
      expect.objectContaining({ asked: 0, status: "unclear", answeredBy: [] }),
    );
    const alone = offlineQuestions([turn("ana", "why does the test hang?"), turn("ana", "hm")]);
    expect(alone[0].status).toBe("unclear");
    const last = offlineQuestions([turn("bo", "hello"), turn("ana", "why does the test hang?")]);
    expect(last[0]).toEqual({
      question: "why does the test hang?",
      asked: 1,
      status: "unanswered",
      answeredBy: [],
    });
    const late = [
      turn("ana", "why does the test hang?"),
      ...Array.from({ length: FOLLOW_TURNS }, () => turn("ana", "anyway")),
    ];
    late.push(turn("bo", "because of the lock"));
    expect(offlineQuestions(late)[0].status).toBe("unclear");
  });

  it("bounds texts and the count, counting what it cut", () => {
    const turns = [
      turn("ana", `why ${"x ".repeat(400)}?`),
      turn("bo", "y".repeat(5000)),
      ...Array.from({ length: MAX_SEGMENT_QUESTIONS + 2 }, (_, i) => turn("cy", `is it ${i}?`)),
    ];
    const trimmed = {};
    const questions = offlineQuestions(turns, trimmed);
    expect(questions).toHaveLength(MAX_SEGMENT_QUESTIONS);
    expect(questions[0].question.length).toBeLessThanOrEqual(MAX_QUESTION_CHARS);
    expect(questions[0].answer?.length).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    expect(trimmed).toEqual({ questions: 3, questionTexts: 1 });
  });

  it("comes with the extractor's answer, also when its candidates are reused", async () => {
    const stored = new Map<string, WindowOutput>();
    const outputs: WindowOutputs = {
      get: async (key) => stored.get(key),
      put: async (key, output) => {
        stored.set(key, output);
      },
    };
    const turns = [turn("ana", "how do I flash the firmware?"), turn("bo", "use the flash tool")];
    const extractor = new KeyphraseExtractor();
    const first = await extractor.extract(turns, { outputs });
    const again = await extractor.extract(turns, { outputs });
    expect(first.questions).toEqual([expect.objectContaining({ asked: 0, status: "answered" })]);
    expect(again.questions).toEqual(first.questions);
  });

  it("keeps its invariants on any segment, deterministically (property)", () => {
    const authors = ["ana", "bo", "cy"];
    const texts = [
      "how so?",
      "why does it fail",
      "it works now.",
      "ok",
      "can you see it?",
      "bo: yes",
      "ana, no",
    ];
    const anyTurn = fc.record({
      author: fc.option(fc.constantFrom(...authors), { nil: undefined }),
      text: fc.oneof(fc.constantFrom(...texts), fc.string({ maxLength: 30 })),
      kind: fc.constantFrom("user", "user", "bot", "system" as const),
      replyTo: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(anyTurn, { maxLength: 30 }), (drawn) => {
        const turns: ExtractionTurn[] = drawn.map((t, i) => {
          const shaped: ExtractionTurn = { role: "user", kind: t.kind, text: t.text, id: `m${i}` };
          if (t.author !== undefined) shaped.author = t.author;
          if (t.replyTo !== undefined) shaped.replyTo = `m${t.replyTo}`;
          return shaped;
        });
        const questions = offlineQuestions(turns);
        expect(offlineQuestions(turns)).toEqual(questions);
        let previous = -1;
        for (const q of questions) {
          expect(q.asked).toBeGreaterThan(previous);
          previous = q.asked;
          expect(turns[q.asked].kind).toBe("user");
          expect(q.status === "answered").toBe(q.answeredBy.length > 0);
          if (q.status !== "answered") expect(q.answer).toBeUndefined();
          for (const by of q.answeredBy) {
            expect(by).toBeGreaterThan(q.asked);
            expect(by).toBeLessThan(turns.length);
            expect(turns[by].kind).not.toBe("system");
          }
          expect([...q.answeredBy].sort((a, b) => a - b)).toEqual(q.answeredBy);
        }
      }),
    );
  });
});
