import { describe, expect, it } from "vitest";
import { RRF_K, reciprocalRankFusion } from "../../../lib/outlets/search/fusion.js";

describe("reciprocalRankFusion", () => {
  it("scores each item by the sum of 1/(k + rank) over the lists, best first, each once", () => {
    const fused = reciprocalRankFusion(
      [
        ["a", "b", "c"],
        ["c", "d", "a"],
      ],
      (x) => x,
    );
    expect(fused.map((f) => f.item)).toEqual(["a", "c", "b", "d"]);
    expect(fused[0]?.score).toBeCloseTo(1 / (RRF_K + 1) + 1 / (RRF_K + 3));
    expect(fused[2]?.score).toBeCloseTo(1 / (RRF_K + 2));
  });

  it("breaks ties by the order items were first met, and takes a k", () => {
    const fused = reciprocalRankFusion([["a"], ["b"]], (x) => x, 1);
    expect(fused).toEqual([
      { item: "a", score: 0.5 },
      { item: "b", score: 0.5 },
    ]);
    expect(reciprocalRankFusion([], (x: string) => x)).toEqual([]);
  });
});
