import { slidingWindowSpans } from "convoseg/windows";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

/** Window size, overlap and per item an optional distance back to its reply target. */
const cases = fc.integer({ min: 1, max: 12 }).chain((windowSize) =>
  fc.record({
    windowSize: fc.constant(windowSize),
    overlap: fc.integer({ min: 0, max: windowSize - 1 }),
    back: fc.array(fc.option(fc.integer({ min: -2, max: 20 }), { nil: undefined }), {
      maxLength: 80,
    }),
  }),
);
const targetOf = (back: (number | undefined)[]) => (index: number) => {
  const distance = back[index];
  return distance === undefined ? undefined : index - distance;
};

describe("reply-aware sliding windows", () => {
  it("put every reply in a window with its target when it lies fewer than windowSize back", () => {
    fc.assert(
      fc.property(cases, ({ windowSize, overlap, back }) => {
        const spans = slidingWindowSpans(back.length, windowSize, overlap, targetOf(back));
        back.forEach((distance, reply) => {
          if (distance === undefined || distance <= 0 || distance >= windowSize) return;
          const target = reply - distance;
          if (target < 0) return;
          expect(spans.some(([s, e]) => s <= target && reply < e)).toBe(true);
        });
      }),
      { numRuns: 2000 },
    );
  });

  it("cover every item with windows of at most windowSize that start later each time", () => {
    fc.assert(
      fc.property(cases, ({ windowSize, overlap, back }) => {
        const spans = slidingWindowSpans(back.length, windowSize, overlap, targetOf(back));
        if (back.length === 0) {
          expect(spans).toEqual([]);
          return;
        }
        expect(spans[0][0]).toBe(0);
        expect(spans.at(-1)?.[1]).toBe(back.length);
        spans.forEach(([s, e], i) => {
          expect(e - s).toBeLessThanOrEqual(windowSize);
          expect(e).toBeGreaterThan(s);
          if (i > 0) {
            expect(s).toBeGreaterThan(spans[i - 1][0]);
            expect(s).toBeLessThanOrEqual(spans[i - 1][1]);
          }
        });
      }),
      { numRuns: 2000 },
    );
  });

  it("are the plain windows when nothing replies", () => {
    fc.assert(
      fc.property(cases, ({ windowSize, overlap, back }) => {
        expect(slidingWindowSpans(back.length, windowSize, overlap, () => undefined)).toEqual(
          slidingWindowSpans(back.length, windowSize, overlap),
        );
      }),
    );
  });

  it("start the next window at the target of a reply the plain windows would separate", () => {
    // Windows of 4 with overlap 1: plainly [0,4) [3,7). Item 5 answers item 2: the second
    // window starts at 2 instead, [2,6), and the third at 5.
    const replyTarget = (i: number) => (i === 5 ? 2 : undefined);
    expect(slidingWindowSpans(8, 4, 1)).toEqual([
      [0, 4],
      [3, 7],
      [6, 8],
    ]);
    expect(slidingWindowSpans(8, 4, 1, replyTarget)).toEqual([
      [0, 4],
      [2, 6],
      [5, 8],
    ]);
  });
});
