import { ConversationSegmenter } from "convoseg/segmenter";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { literalClosedSegments } from "./literal-segmenter.js";

interface Item {
  id: number;
  t: number;
  size: number;
}

/**
 * Small integer timestamps and parameters, so that ties, equal gaps, gaps equal to `settle` and
 * `now - last == settle` all happen often.
 */
const options = fc.record({
  maxSize: fc.integer({ min: 1, max: 8 }),
  settle: fc.integer({ min: 0, max: 12 }),
  minItems: fc.integer({ min: 1, max: 4 }),
});
const gaps = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 15 })), {
  maxLength: 60,
});
const toItems = (gapList: number[], sizes: number[] = []): Item[] => {
  let t = 1000;
  return gapList.map((gap, id) => {
    t += gap;
    return { id, t, size: sizes[id % Math.max(sizes.length, 1)] ?? 1 };
  });
};
const stream = fc
  .tuple(gaps, fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 7 }))
  .map(([g, sizes]) => toItems(g, sizes));
const nowOffset = fc.integer({ min: -5, max: 30 });
const lastTime = (items: Item[]) => (items.length ? items[items.length - 1].t : 0);
const ids = (segments: Item[][]) => segments.map((s) => s.map((i) => i.id));
const ts = (i: Item) => i.t;
const size = (i: Item) => i.size;

describe("ConversationSegmenter properties", () => {
  it("equals the literal transcription of the spec on random streams", () => {
    fc.assert(
      fc.property(
        options,
        stream,
        nowOffset,
        fc.boolean(),
        fc.boolean(),
        (opts, items, offset, shuffled, sized) => {
          const input = shuffled ? [...items].reverse() : items;
          const now = lastTime(items) + offset;
          const sizeOf = sized ? size : undefined;
          const actual = new ConversationSegmenter(opts).closedSegments(input, now, ts, sizeOf);
          const expected = literalClosedSegments(input, now, ts, sizeOf, opts);
          expect(ids(actual)).toEqual(ids(expected));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("equals the literal transcription with fractional sizes and settle", () => {
    const fractional = fc.record({
      maxSize: fc.integer({ min: 1, max: 3 }),
      settle: fc.double({ min: 0, max: 10, noNaN: true }),
      minItems: fc.integer({ min: 1, max: 3 }),
    });
    const weights = fc.array(fc.double({ min: 0, max: 2, noNaN: true }), {
      minLength: 1,
      maxLength: 5,
    });
    fc.assert(
      fc.property(fractional, gaps, weights, nowOffset, (opts, g, w, offset) => {
        const items = toItems(g, w);
        const now = lastTime(items) + offset;
        const actual = new ConversationSegmenter(opts).closedSegments(items, now, ts, size);
        const expected = literalClosedSegments(items, now, ts, size, opts);
        expect(ids(actual)).toEqual(ids(expected));
      }),
      { numRuns: 1000 },
    );
  });

  it("returns disjoint, time-ordered segments that are contiguous in sorted order", () => {
    fc.assert(
      fc.property(options, stream, nowOffset, fc.func(fc.integer()), (opts, items, offset, key) => {
        const input = [...items].sort((a, b) => key(a) - key(b));
        const segments = new ConversationSegmenter(opts).closedSegments(
          input,
          lastTime(items) + offset,
          ts,
          size,
        );
        const sorted = [...input].sort((a, b) => a.t - b.t);
        const position = new Map(sorted.map((item, index) => [item, index]));
        let previousEnd = -1;
        for (const segment of segments) {
          expect(segment.length).toBeGreaterThanOrEqual(opts.minItems);
          const first = position.get(segment[0]) ?? -1;
          expect(first).toBeGreaterThan(previousEnd);
          segment.forEach((item, i) => {
            expect(position.get(item)).toBe(first + i);
          });
          previousEnd = first + segment.length - 1;
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("with minItems 1, keeps every closed segment unchanged as the stream grows in order", () => {
    fc.assert(
      fc.property(
        options,
        stream,
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 0, max: 400 }),
        (opts, items, a, b) => {
          const segmenter = new ConversationSegmenter({ ...opts, minItems: 1 });
          const [early, late] = [1000 + Math.min(a, b), 1000 + Math.max(a, b)];
          // In-order arrival: at time `now`, exactly the items stamped at or before it exist.
          const seenAt = (now: number) => items.filter((i) => i.t <= now);
          const before = segmenter.closedSegments(seenAt(early), early, ts, size);
          const after = segmenter.closedSegments(seenAt(late), late, ts, size);
          expect(ids(after).slice(0, before.length)).toEqual(ids(before));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("does not depend on input order except among equal timestamps", () => {
    fc.assert(
      fc.property(options, stream, nowOffset, fc.func(fc.integer()), (opts, items, offset, key) => {
        const segmenter = new ConversationSegmenter(opts);
        const now = lastTime(items) + offset;
        const permuted = [...items].sort((a, b) => key(a) - key(b));
        // Stable-sorting the permutation fixes the order of ties; nothing else may matter.
        const sortedPermutation = [...permuted].sort((a, b) => a.t - b.t);
        expect(ids(segmenter.closedSegments(permuted, now, ts, size))).toEqual(
          ids(segmenter.closedSegments(sortedPermutation, now, ts, size)),
        );
      }),
      { numRuns: 1000 },
    );
  });

  it("gives the same answer for any order of distinct timestamps", () => {
    const distinct = fc
      .uniqueArray(fc.integer({ min: 0, max: 500 }), { maxLength: 60 })
      .map((times) => times.map((t, id) => ({ id, t, size: 1 })));
    fc.assert(
      fc.property(options, distinct, fc.func(fc.integer()), (opts, items, key) => {
        const segmenter = new ConversationSegmenter(opts);
        const now = Math.max(0, ...items.map((i) => i.t)) + 3;
        const permuted = [...items].sort((a, b) => key(a) - key(b));
        expect(ids(segmenter.closedSegments(permuted, now, ts))).toEqual(
          ids(segmenter.closedSegments(items, now, ts)),
        );
      }),
      { numRuns: 1000 },
    );
  });

  it("exposes the carved pieces that closedSegments withholds, folds and drops", () => {
    fc.assert(
      fc.property(options, stream, nowOffset, (opts, items, offset) => {
        const segmenter = new ConversationSegmenter(opts);
        const conversations = segmenter.conversations(items, ts, size);
        // Every item in exactly one piece, in time order.
        expect(conversations.flat(2).map((i) => i.id)).toEqual(
          [...items].sort((a, b) => a.t - b.t).map((i) => i.id),
        );
        // Applying step 5 and 6 to the pieces gives closedSegments.
        const now = lastTime(items) + offset;
        const expected = conversations.flatMap((pieces, c) => {
          const kept = pieces.slice();
          const last = pieces[pieces.length - 1];
          const open =
            c === conversations.length - 1 && now - last[last.length - 1].t <= opts.settle;
          if (open) kept.pop();
          else if (kept.length > 1 && last.length < opts.minItems) {
            kept.pop();
            kept[kept.length - 1] = [...kept[kept.length - 1], ...last];
          }
          return kept.filter((piece) => piece.length >= opts.minItems);
        });
        expect(ids(segmenter.closedSegments(items, now, ts, size))).toEqual(ids(expected));
      }),
      { numRuns: 1000 },
    );
  });
});
