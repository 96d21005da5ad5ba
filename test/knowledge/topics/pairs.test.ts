import { sameTopic } from "convoseg/topics";
import { describe, expect, it } from "vitest";
import { readPairs, scorePairs } from "../../../bench/topic-pairs.js";

describe("the token merge on the labelled topic pairs", () => {
  const pairs = readPairs();

  it("is a set of at least 300 distinct pairs, both kinds well represented", () => {
    expect(pairs.length).toBeGreaterThanOrEqual(300);
    const keys = new Set(
      pairs.map((p) => [p.a.toLowerCase(), p.b.toLowerCase()].sort().join("\n")),
    );
    expect(keys.size).toBe(pairs.length);
    expect(pairs.filter((p) => p.same).length).toBeGreaterThan(100);
    expect(pairs.filter((p) => !p.same).length).toBeGreaterThan(100);
  });

  it("holds precision ≥ 0.95 and recall ≥ 0.8", () => {
    const scores = scorePairs(pairs, sameTopic);
    expect(scores.precision, JSON.stringify(scores.falsePositives)).toBeGreaterThanOrEqual(0.95);
    expect(scores.recall).toBeGreaterThanOrEqual(0.8);
  });

  it("scores what it is given", () => {
    const scores = scorePairs(
      [
        { a: "x", b: "x", same: true },
        { a: "x", b: "y", same: true },
        { a: "x", b: "z", same: false },
      ],
      (a, b) => a === b || b === "z",
    );
    expect(scores).toMatchObject({ truePositives: 1, precision: 0.5, recall: 0.5 });
  });
});
