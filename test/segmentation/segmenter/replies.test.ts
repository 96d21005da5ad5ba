import { ConversationSegmenter, type ReplyLinks } from "convoseg/segmenter";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { literalClosedSegments } from "./literal-segmenter.js";

interface Item {
  id: number;
  t: number;
  size: number;
  replyTo?: number | null;
}

const ts = (i: Item) => i.t;
const size = (i: Item) => i.size;
const replies: ReplyLinks<Item> = { id: (i) => i.id, replyTo: (i) => i.replyTo };
const ids = (segments: Item[][]) => segments.map((s) => s.map((i) => i.id));
const FAR = Number.MAX_SAFE_INTEGER;

const options = fc.record({
  maxSize: fc.integer({ min: 1, max: 8 }),
  settle: fc.integer({ min: 0, max: 12 }),
  minItems: fc.integer({ min: 1, max: 4 }),
});
/** Streams with ties, and reply links to earlier, later, missing and the item's own id. */
const stream = fc
  .array(
    fc.record({
      gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 15 })),
      size: fc.integer({ min: 0, max: 4 }),
      target: fc.option(fc.integer({ min: -3, max: 60 }), { nil: undefined }),
    }),
    { maxLength: 60 },
  )
  .map((rows) => {
    let t = 1000;
    return rows.map(({ gap, size, target }, id): Item => {
      t += gap;
      return { id, t, size, replyTo: target === undefined ? undefined : id - target };
    });
  });

/** Links whose two ends are in different segments, over the items given. */
function severed(segments: Item[][]): number {
  const segmentOf = new Map<number, number>();
  segments.forEach((segment, s) => {
    for (const item of segment) segmentOf.set(item.id, s);
  });
  let count = 0;
  for (const [id, s] of segmentOf) {
    const item = segments[s].find((i) => i.id === id);
    const target = item?.replyTo;
    if (target == null || target === id || !segmentOf.has(target)) continue;
    if (segmentOf.get(target) !== s) count++;
  }
  return count;
}

describe("size cuts and replies", () => {
  it("equal the literal transcription of the rule on random streams, sorted or not", () => {
    fc.assert(
      fc.property(options, stream, fc.boolean(), fc.boolean(), (opts, items, reversed, sized) => {
        const input = reversed ? [...items].reverse() : items;
        const sizeOf = sized ? size : undefined;
        const segmenter = new ConversationSegmenter(opts);
        const actual = segmenter.closedSegments(input, FAR, ts, sizeOf, replies);
        const expected = literalClosedSegments(input, FAR, ts, sizeOf, opts, replies);
        expect(ids(actual)).toEqual(ids(expected));
      }),
      { numRuns: 3000 },
    );
  });

  it("without links cut exactly where the largest-gap rule cuts", () => {
    fc.assert(
      fc.property(options, stream, (opts, items) => {
        const unlinked = items.map(({ replyTo: _, ...item }) => item);
        const segmenter = new ConversationSegmenter(opts);
        expect(ids(segmenter.closedSegments(unlinked, FAR, ts, size, replies))).toEqual(
          ids(segmenter.closedSegments(unlinked, FAR, ts, size)),
        );
      }),
      { numRuns: 1000 },
    );
  });

  it("keep every closed segment unchanged as the stream grows in order", () => {
    fc.assert(
      fc.property(options, stream, (opts, items) => {
        const segmenter = new ConversationSegmenter({ ...opts, minItems: 1 });
        let emitted: number[][] = [];
        for (let n = 0; n <= items.length; n++) {
          const prefix = items.slice(0, n);
          const now = n === 0 ? 0 : prefix[n - 1].t;
          const closed = ids(segmenter.closedSegments(prefix, now, ts, size, replies));
          expect(closed.slice(0, emitted.length)).toEqual(emitted);
          emitted = closed;
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("keep a question with its answer where the plain rule severs them", () => {
    // maxSize 4: the first cut is one of k = 1..4 (item 4 is the first past the limit). The plain
    // rule takes the widest gap, 2 s before item 2, and severs 3's reply to 1; with the link
    // known, k = 1 and k = 4 sever nothing, gaps tie at 1 s, and the later one wins.
    const t = [0, 1000, 3000, 4000, 5000, 9000, 10000, 11000];
    const items: Item[] = t.map((at, id) => ({ id, t: at, size: 1 }));
    items[3].replyTo = 1;
    const segmenter = new ConversationSegmenter({ maxSize: 4, settle: 60_000 });
    const plain = segmenter.closedSegments(items, FAR, ts);
    const linked = segmenter.closedSegments(items, FAR, ts, undefined, replies);
    expect(ids(plain)[0]).toEqual([0, 1]);
    expect(severed(plain)).toBe(1);
    expect(severed(linked)).toBe(0);
    expect(ids(linked)[0]).toEqual([0, 1, 2, 3]);
  });

  it("name the item whose id or reply target is not a string or number", () => {
    const segmenter = new ConversationSegmenter();
    const bad = [
      { id: 1, t: 0, size: 1 },
      { id: {}, t: 1, size: 1 },
    ] as unknown as Item[];
    expect(() => segmenter.closedSegments(bad, FAR, ts, undefined, replies)).toThrow(
      /id of item 1 must be a string or a number/,
    );
    const badTarget = [{ id: 1, t: 0, size: 1, replyTo: true }] as unknown as Item[];
    expect(() => segmenter.closedSegments(badTarget, FAR, ts, undefined, replies)).toThrow(
      /replyTo of item 0/,
    );
  });
});
