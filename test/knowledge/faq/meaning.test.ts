import { groupQuestions, meaningMatcher } from "convoseg/faq";
import { describe, expect, it } from "vitest";

const asked = (question: string, askedTs: number) => ({
  question,
  askedId: `m${askedTs}`,
  askedTs,
  answerIds: [],
});

describe("meaningMatcher", () => {
  it("groups questions a model finds alike in other words, never two its words oppose", () => {
    // A model that finds every nvidia question alike, and the two suspend ones alike.
    const vectors = new Map<string, number[]>([
      ["how do I install nvidia drivers", [0, 1]],
      ["how do I uninstall nvidia drivers", [0, 1]],
      ["setting up the nvidia driver", [0, 1]],
      ["wifi not working after suspend", [1, 0]],
      ["wireless dies once I resume", [1, 0]],
    ]);
    const questions = [...vectors.keys()].map((text, i) => asked(text, i));
    const byWords = groupQuestions(questions);
    expect(byWords).toEqual([]);
    const entries = groupQuestions(questions, { matchers: [meaningMatcher(vectors)] });
    const groups = entries.map((e) => [e.question, ...e.wordings].sort());
    expect(groups).toContainEqual([
      "wifi not working after suspend",
      "wireless dies once I resume",
    ]);
    // install and uninstall are near to the model, and apart by their words: never one entry.
    for (const group of groups)
      expect(
        group.includes("how do I install nvidia drivers") &&
          group.includes("how do I uninstall nvidia drivers"),
      ).toBe(false);
    expect(() => meaningMatcher(vectors, 1.5)).toThrow(/similarity must be above 0/);
  });
});
