import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sortScratch, sortStable } from "../../../lib/segmentation/segmenter/stable-order.js";

/** Positions in stable ascending order, by a plain comparator sort. */
const expectedOrder = (values: number[]): number[] =>
  values.map((_, i) => i).sort((a, b) => values[a] - values[b] || a - b);

/** The order `sortStable` reports, after checking that it sorted the values by it. */
const orderOf = (values: number[]): number[] => {
  const times = Float64Array.from(values);
  const order = sortStable(times, sortScratch(values.length));
  const positions = order ? Array.from(order) : values.map((_, i) => i);
  expect(Array.from(times, (t) => t + 0)).toEqual(positions.map((p) => values[p] + 0));
  return positions;
};

describe("stableAscendingOrder", () => {
  it("reports already sorted input (ties included) as needing no reordering", () => {
    expect(sortStable(Float64Array.from([1, 2, 2, 3]), sortScratch(4))).toBeUndefined();
    expect(sortStable(new Float64Array(0), sortScratch(0))).toBeUndefined();
  });

  it("orders negatives, zeros of both signs, fractions and extremes numerically, ties stable", () => {
    const values = [3, -0, -1.5, 0, Number.MAX_VALUE, -Number.MAX_VALUE, 5e-324, -0, 2 ** 53, 0.1];
    expect(orderOf(values)).toEqual(expectedOrder(values));
  });

  it("matches a stable comparator sort on random doubles", () => {
    const value = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer({ min: -3, max: 3 }),
      fc.constantFrom(0, -0),
    );
    fc.assert(
      fc.property(fc.array(value, { maxLength: 200 }), (values) => {
        expect(orderOf(values)).toEqual(expectedOrder(values));
      }),
      { numRuns: 2000 },
    );
  });

  it("matches a stable comparator sort on epoch-millisecond timestamps with many ties", () => {
    const epoch = fc.integer({ min: 1_600_000_000_000, max: 1_600_000_000_000 + 2 ** 40 });
    const tied = fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 300 });
    fc.assert(
      fc.property(epoch, tied, fc.integer({ min: 1, max: 2 ** 20 }), (base, steps, scale) => {
        const values = steps.map((s) => base + s * scale);
        expect(orderOf(values)).toEqual(expectedOrder(values));
      }),
      { numRuns: 500 },
    );
  });
});
