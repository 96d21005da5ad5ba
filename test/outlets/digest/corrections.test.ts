/**
 * People's corrections in the digest: a question's corrected status and answer, marked so in
 * every form (never who made it), hidden ones left out, a corrected answer first in the FAQ.
 */
import {
  buildDigest,
  digestHtml,
  digestMarkdown,
  digestText,
  storeDigestSources,
} from "convoseg/digest";
import { MemoryResultStore } from "convoseg/knowledge/store";
import { correctQuestion } from "convoseg/knowledge/write";
import { describe, expect, it } from "vitest";
import { question, resultWith, save } from "../../knowledge/question-index.js";

const T0 = Date.UTC(2026, 5, 1);

describe("the digest's questions, corrected", () => {
  it("shows the corrected status and answer, marked, without who; a hidden question is not listed", async () => {
    const store = new MemoryResultStore();
    await save(
      store,
      resultWith("help", "s1", [
        question("grub", T0 + 1000),
        question("wifi", T0 + 2000, "answered", { answer: "6.8", answerIds: ["m-7"] }),
        question("spam", T0 + 3000),
      ]),
    );
    const correct = (
      questionId: string,
      action: "answered" | "reopen" | "hidden",
      answerId?: string,
    ) =>
      correctQuestion(store, {
        channel: "help",
        questionId,
        action,
        ...(answerId && { answerId }),
        by: "Zed Operator",
      });
    await correct("grub", "answered", "m-5");
    await correct("wifi", "reopen");
    await correct("spam", "hidden");
    const digest = await buildDigest(storeDigestSources(store, { getMessages: async () => [] }), {
      channels: ["help"],
      since: T0,
      until: T0 + 86_400_000,
      now: new Date(T0 + 86_400_000),
    });
    expect(digest.answered.map((q) => [q.question, q.answerIds, q.corrected])).toEqual([
      ["how do I fix grub?", ["m-5"], true],
    ]);
    expect(digest.unanswered.map((q) => [q.question, q.answer, q.corrected])).toEqual([
      ["how do I fix wifi?", undefined, true],
    ]);
    expect(digest.unclear).toEqual([]);
    for (const text of [digestMarkdown(digest), digestText(digest), digestHtml(digest)]) {
      expect(text).toContain("how do I fix grub? ");
      expect(text).toContain("(corrected by a person)");
      expect(text).not.toContain("spam");
      expect(text).not.toContain("Zed");
    }
  });
});
