/**
 * The port of the Ubuntu IRC corpus's evaluation tools (`bench/disentangle/metrics.ts`): hand-made
 * cases worked out by hand, and one two-file case whose numbers come from running the original
 * scripts (conversation-eval.py, graph-eval.py at commit 82ed04f) on it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  adjustedRandIndex,
  clustersOf,
  evaluate,
  exactMatch,
  type FileClusters,
  type FileLinks,
  type Links,
  linkScores,
  mixing,
  oneMinusScaledVI,
  oneToOne,
  toClusters,
  whole,
} from "../../bench/disentangle/metrics.js";

const links = (entries: Record<number, number[]>): Links =>
  new Map(Object.entries(entries).map(([id, parents]) => [Number(id), parents]));

/**
 * File a: 1002 and 1004 answer the same context line 995 (one conversation); 1006 answers both
 * 1005 and 1003, which merges two threads; 1007 is a system line. File b: three conversations.
 */
const FILE_A: FileLinks = {
  gold: links({
    1000: [],
    1001: [1000],
    1002: [995],
    1003: [1001],
    1004: [995],
    1005: [],
    1006: [1005, 1003],
    1007: [],
  }),
  predicted: links({
    1000: [],
    1001: [1000],
    1002: [1001],
    1003: [],
    1004: [1002],
    1005: [1003],
    1006: [1005],
    1007: [1006],
  }),
  system: new Set([1007]),
};
const FILE_B: FileLinks = {
  gold: links({ 1000: [], 1001: [1000], 1002: [], 1003: [1002], 1004: [1001], 1005: [] }),
  predicted: links({ 1000: [], 1001: [1000], 1002: [], 1003: [1002], 1004: [1000], 1005: [999] }),
};

describe("clustersOf", () => {
  it("joins through context parents and multiple parents, keeping only the annotated ids", () => {
    expect(clustersOf(FILE_A.gold)).toEqual([[1000, 1001, 1003, 1005, 1006], [1002, 1004], [1007]]);
    expect(clustersOf(FILE_B.predicted)).toEqual([[1000, 1001, 1004], [1002, 1003], [1005]]);
  });

  it("refuses a parent in the annotated range that is not annotated", () => {
    expect(() => clustersOf(links({ 1000: [], 1001: [1003] }))).toThrow(RangeError);
  });
});

describe("toClusters", () => {
  it("refuses a prediction over other messages than the gold (the tool's line-set check)", () => {
    const gold = links({ 1000: [], 1001: [1000] });
    expect(() => toClusters({ gold, predicted: links({ 1000: [] }) })).toThrow(/1001/);
    expect(() => toClusters({ gold, predicted: links({ 1000: [], 1001: [], 1002: [] }) })).toThrow(
      /1002/,
    );
  });
});

describe("evaluate", () => {
  it("gives 100 everywhere (and a mixing of 1) to the gold itself", () => {
    const perfect = [FILE_A, FILE_B].map((f) => ({ ...f, predicted: f.gold }));
    expect(evaluate(perfect)).toEqual({
      exact: { precision: 100, recall: 100, f: 100 },
      oneToOne: 100,
      vi: 100,
      ari: 100,
      link: { precision: 100, recall: 100, f: 100 },
      whole: 100,
      mixing: 1,
    });
  });

  it("scores all singletons against a three-message conversation and a singleton", () => {
    const gold = links({ 1000: [], 1001: [1000], 1002: [1000], 1003: [] });
    const singletons = links({ 1000: [], 1001: [], 1002: [], 1003: [] });
    const scores = evaluate([{ gold, predicted: singletons }]);
    // No predicted conversation of 2+ messages: precision 0 by the tool's rule, recall 0 of 1.
    expect(scores.exact).toEqual({ precision: 0, recall: 0, f: 0 });
    // One singleton paired with the big conversation, {1003} with {1003}: 2 of 4.
    expect(scores.oneToOne).toBe(50);
    // VI = H(pred) - H(gold) = 2 - H(3/4, 1/4) bits, scaled by log2 4 = 2.
    const goldEntropy = -(0.75 * Math.log2(0.75) + 0.25 * Math.log2(0.25));
    expect(scores.vi).toBeCloseTo(100 - (100 * (2 - goldEntropy)) / 2, 10);
    // No pair together on the predicted side: index and expectation both 0.
    expect(scores.ari).toBe(0);
    // Gold pairs 1000-1000, 1001-1000, 1002-1000, 1003-1003; predicted four self links.
    expect(scores.link).toEqual({ precision: 50, recall: 50, f: 50 });
    expect(scores.whole).toBe(0);
    expect(scores.mixing).toBe(1);
  });

  it("matches conversation-eval.py and graph-eval.py on a two-file example", () => {
    // Obtained by writing FILE_A and FILE_B as "a.annotation.txt:PARENT CHILD -" lines, turning
    // them into clusters with tools/format-conversion/graph-to-cluster.py, and running
    // `conversation-eval.py gold auto --metric vi rand ex 1-1` (ortools' min-cost flow replaced
    // by an exact assignment solver, checked against brute force) and
    // `graph-eval.py --gold gold --auto auto`. They print: 77.30 1 - Scaled VI, 49.47 Adjusted
    // rand index, 50.00/50.00/50.00 Matched clusters P/R/F, 78.57 one-to-one, and
    // "g/a/m: 15 14 7", "p/r/f: 50.0 46.7 48.3". The full-precision VI and ARI are from the
    // same script's functions: 77.29982828759319 and 49.46604015378043.
    const scores = evaluate([FILE_A, FILE_B]);
    expect(scores.vi).toBeCloseTo(77.29982828759319, 9);
    expect(scores.ari).toBeCloseTo(49.46604015378043, 9);
    expect(scores.exact).toEqual({ precision: 50, recall: 50, f: 50 });
    // By hand: a's {1002,1004} with its predicted {1000,1001,1002,1004} (2) and its big thread
    // with {1003,1005,1006,1007} (3); b's three conversations exactly (3 + 2 + 1): 11 of 14.
    expect(scores.oneToOne).toBeCloseTo((100 * 11) / 14, 10);
    expect(scores.link.precision).toBeCloseTo((100 * 7) / 14, 10);
    expect(scores.link.recall).toBeCloseTo((100 * 7) / 15, 10);
    expect(scores.link.f).toBeCloseTo(48.275862068965516, 10);
    // Gold conversations of 2+ people's messages: a's big one (split), a's {1002,1004}, b's two
    // (kept): 3 of 4. Predicted conversations: a's first mixes 2 gold, a's second 1 (the system
    // line 1007 left out), b's three 1 each: 6 / 5.
    expect(scores.whole).toBe(75);
    expect(scores.mixing).toBeCloseTo(1.2, 12);
  });
});

describe("the measures one by one", () => {
  it("gives ARI 100 where the tool divides by zero: both sides all singletons", () => {
    const file: FileClusters = { gold: [[1], [2], [3]], predicted: [[3], [1], [2]] };
    expect(adjustedRandIndex([file])).toBe(100);
    expect(oneMinusScaledVI([file])).toBe(100);
    expect(oneToOne([file])).toBe(100);
  });

  it("counts a start as a self link, and a link either way round as one pair", () => {
    const gold = links({ 1000: [], 1001: [1000] });
    // Both predicted links are the pair (1001, 1000), kept once as in the tool's set: the gold
    // start 1000-1000 is missed, and precision is 1 of 1.
    expect(linkScores([{ gold, predicted: links({ 1000: [1001], 1001: [1000] }) }])).toEqual({
      precision: 100,
      recall: 50,
      f: (2 * 100 * 50) / 150,
    });
  });

  it("pools exact matches over files rather than averaging per file", () => {
    const hit: FileClusters = { gold: [[1, 2]], predicted: [[1, 2]] };
    const miss: FileClusters = {
      gold: [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
      predicted: [[1, 2, 3, 4, 5, 6]],
    };
    // 1 of 4 gold matched (a per-file mean of recall would be 50); 1 of 2 predicted.
    expect(exactMatch([hit, miss])).toEqual({ precision: 50, recall: 25, f: (2 * 50 * 25) / 75 });
  });

  it("leaves system lines out of whole and mixing", () => {
    const file: FileClusters = {
      gold: [[1, 2, 9], [3]],
      predicted: [[1, 2], [9], [3]],
      system: new Set([9]),
    };
    expect(whole([file])).toBe(100);
    expect(mixing([file])).toBe(1);
  });
});

/** Conversations of one file from two labellings of ids 0..n-1, ordered by label. */
function partition(labels: readonly number[]): number[][] {
  const byLabel = new Map<number, number[]>();
  labels.forEach((label, id) => {
    byLabel.set(label, [...(byLabel.get(label) ?? []), id]);
  });
  return [...byLabel.entries()].sort((a, b) => a[0] - b[0]).map(([, ids]) => ids);
}

const fileArbitrary = fc.integer({ min: 1, max: 12 }).chain((n) =>
  fc.record({
    gold: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: n, maxLength: n }),
    predicted: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: n, maxLength: n }),
    rename: fc.shuffledSubarray([0, 1, 2, 3, 4, 5], { minLength: 6 }),
  }),
);

function measures(files: readonly FileClusters[]) {
  return [
    exactMatch(files),
    oneToOne(files),
    oneMinusScaledVI(files),
    adjustedRandIndex(files),
    whole(files),
    mixing(files),
  ];
}

describe("properties", () => {
  it("do not depend on conversation names or file order; the cluster measures are symmetric", () => {
    fc.assert(
      fc.property(fc.array(fileArbitrary, { minLength: 1, maxLength: 4 }), (raw) => {
        const files = raw.map((f) => ({
          gold: partition(f.gold),
          predicted: partition(f.predicted),
        }));
        // Renaming the conversations reorders them (they are listed by name) and nothing else.
        const renamed = raw.map((f) => ({
          gold: partition(f.gold.map((label) => f.rename[label])),
          predicted: partition(f.predicted.map((label) => f.rename[label])).reverse(),
        }));
        const reordered = [...renamed].reverse();
        const expected = measures(files);
        const close = (a: unknown, b: unknown) =>
          typeof a === "number" && typeof b === "number"
            ? Number.isNaN(a)
              ? Number.isNaN(b)
              : Math.abs(a - b) < 1e-9
            : JSON.stringify(a) === JSON.stringify(b);
        const same = (got: unknown[]) => got.every((value, i) => close(value, expected[i]));
        expect(same(measures(renamed))).toBe(true);
        expect(same(measures(reordered))).toBe(true);
        const swapped = files.map((f) => ({ gold: f.predicted, predicted: f.gold }));
        expect(exactMatch(swapped).f).toBeCloseTo(exactMatch(files).f, 9);
        expect(oneToOne(swapped)).toBeCloseTo(oneToOne(files), 9);
        expect(oneMinusScaledVI(swapped)).toBeCloseTo(oneMinusScaledVI(files), 9);
        expect(adjustedRandIndex(swapped)).toBeCloseTo(adjustedRandIndex(files), 9);
      }),
      { numRuns: 300 },
    );
  });

  it("one-to-one is the best pairing, as the tool's min-cost flow finds it", () => {
    fc.assert(
      fc.property(fileArbitrary, (f) => {
        const file = { gold: partition(f.gold), predicted: partition(f.predicted) };
        expect(oneToOne([file])).toBeCloseTo(bruteForceOneToOne(file), 9);
      }),
      { numRuns: 300 },
    );
  });
});

/** The largest one-to-one overlap by trying every injective pairing of the smaller side. */
function bruteForceOneToOne(file: FileClusters): number {
  const [small, large] =
    file.predicted.length <= file.gold.length
      ? [file.predicted, file.gold]
      : [file.gold, file.predicted];
  const overlap = (a: readonly number[], b: readonly number[]) =>
    a.filter((id) => b.includes(id)).length;
  const best = (i: number, used: Set<number>): number => {
    if (i === small.length) return 0;
    let top = 0;
    large.forEach((cluster, j) => {
      if (used.has(j)) return;
      used.add(j);
      top = Math.max(top, overlap(small[i], cluster) + best(i + 1, used));
      used.delete(j);
    });
    return top;
  };
  const total = file.gold.reduce((n, c) => n + c.length, 0);
  return (100 * best(0, new Set())) / total;
}
