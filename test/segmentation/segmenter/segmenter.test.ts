import {
  ConversationSegmenter,
  DEFAULT_SETTLE_MS,
  openConversationStart,
} from "convoseg/segmenter";
import { describe, expect, it } from "vitest";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

interface Msg {
  id: number;
  t: number;
}

/** Messages with ids 0.. at the given minute offsets. */
const atMinutes = (...minutes: number[]): Msg[] => minutes.map((m, id) => ({ id, t: m * MINUTE }));
/** Messages at the given millisecond offsets. */
const atMs = (...ms: number[]): Msg[] => ms.map((t, id) => ({ id, t }));
/** `count` messages one minute apart, starting at `from` ms, ids from `firstId`. */
const run = (count: number, from: number, firstId = 0): Msg[] =>
  Array.from({ length: count }, (_, i) => ({ id: firstId + i, t: from + i * MINUTE }));

const ids = (segments: Msg[][]): number[][] => segments.map((s) => s.map((m) => m.id));
const ts = (m: Msg) => m.t;
const farFuture = 1000 * DAY;

describe("ConversationSegmenter: conversation boundaries", () => {
  it("does not split on an overnight lull below settle", () => {
    const msgs = [...run(3, 0), ...run(3, 2 * MINUTE + 20 * HOUR, 3)];
    expect(ids(new ConversationSegmenter().closedSegments(msgs, farFuture, ts))).toEqual([
      [0, 1, 2, 3, 4, 5],
    ]);
  });

  it("does not split on a gap exactly equal to settle", () => {
    const msgs = atMs(0, DAY, 2 * DAY);
    expect(ids(new ConversationSegmenter().closedSegments(msgs, farFuture, ts))).toEqual([
      [0, 1, 2],
    ]);
  });

  it("splits on a gap one millisecond longer than settle", () => {
    const msgs = atMs(0, DAY + 1, 2 * DAY + 1);
    expect(ids(new ConversationSegmenter().closedSegments(msgs, farFuture, ts))).toEqual([
      [0],
      [1, 2],
    ]);
  });

  it("splits a dormant channel by silence and caps each conversation independently", () => {
    const segmenter = new ConversationSegmenter({ maxSize: 4 });
    const first = run(6, 0);
    const second = run(3, 3 * DAY, 6);
    const segments = segmenter.closedSegments([...first, ...second], farFuture, ts);
    // First conversation: 6 items over a cap of 4, zero-variance gaps cut at the later index (4).
    expect(ids(segments)).toEqual([
      [0, 1, 2, 3],
      [4, 5],
      [6, 7, 8],
    ]);
  });

  it("treats settle 0 as: any positive gap ends a conversation, equal times stay together", () => {
    const segmenter = new ConversationSegmenter({ settle: 0 });
    const msgs = atMs(5, 5, 6, 6, 6, 8);
    expect(ids(segmenter.closedSegments(msgs, 100, ts))).toEqual([[0, 1], [2, 3, 4], [5]]);
  });
});

describe("ConversationSegmenter: size cap", () => {
  it("splits only once over maxSize, at the largest interior gap", () => {
    const segmenter = new ConversationSegmenter({ maxSize: 5 });
    // Gaps (minutes): 1, 1, 9, 1, 1, 1 -> the 9-minute lull before item 3 is the seam.
    const msgs = atMinutes(0, 1, 2, 11, 12, 13, 14);
    expect(ids(segmenter.closedSegments(msgs, farFuture, ts))).toEqual([
      [0, 1, 2],
      [3, 4, 5, 6],
    ]);
  });

  it("never splits a run at or under maxSize however lulled", () => {
    const segmenter = new ConversationSegmenter({ maxSize: 5 });
    const msgs = atMs(0, 20 * HOUR, 40 * HOUR, 60 * HOUR, 80 * HOUR);
    expect(ids(segmenter.closedSegments(msgs, farFuture, ts))).toEqual([[0, 1, 2, 3, 4]]);
  });

  it("considers the gap right after the fitting prefix as a cut", () => {
    const segmenter = new ConversationSegmenter({ maxSize: 3 });
    // Prefix of 3 fits; the largest gap is before item 3, i.e. k = limit.
    const msgs = atMinutes(0, 1, 2, 30, 31);
    expect(ids(segmenter.closedSegments(msgs, farFuture, ts))).toEqual([
      [0, 1, 2],
      [3, 4],
    ]);
  });

  it("favours the later index between equal gaps", () => {
    const segmenter = new ConversationSegmenter({ maxSize: 5 });
    // Gaps: 5, 1, 5, 1, 1, 1: both 5-minute gaps tie; the later one (before item 3) wins.
    const msgs = atMinutes(0, 5, 6, 11, 12, 13, 14);
    expect(ids(segmenter.closedSegments(msgs, farFuture, ts))).toEqual([
      [0, 1, 2],
      [3, 4, 5, 6],
    ]);
  });

  it("makes progress when every gap is zero", () => {
    const segmenter = new ConversationSegmenter({ maxSize: 3 });
    const msgs = atMs(7, 7, 7, 7, 7, 7, 7, 7);
    expect(ids(segmenter.closedSegments(msgs, farFuture, ts))).toEqual([
      [0, 1, 2],
      [3, 4, 5],
      [6, 7],
    ]);
  });

  it("weights items with the size accessor", () => {
    const segmenter = new ConversationSegmenter({ maxSize: 10 });
    const msgs = atMinutes(0, 1, 2, 3, 4);
    const weights = [4, 4, 4, 1, 1];
    const segments = segmenter.closedSegments(msgs, farFuture, ts, (m) => weights[m.id]);
    // 4+4 fits, 4+4+4 does not: the first cut lands within the first two items.
    expect(ids(segments)).toEqual([
      [0, 1],
      [2, 3, 4],
    ]);
  });

  it("makes a lone item heavier than maxSize its own segment", () => {
    const segmenter = new ConversationSegmenter({ maxSize: 10 });
    const msgs = atMinutes(0, 1, 2);
    const weights = [2, 50, 2];
    const segments = segmenter.closedSegments(msgs, farFuture, ts, (m) => weights[m.id]);
    expect(ids(segments)).toEqual([[0], [1], [2]]);
  });

  it("lets zero-size items ride along without counting against maxSize", () => {
    const segmenter = new ConversationSegmenter({ maxSize: 2 });
    const msgs = atMinutes(0, 1, 2, 3, 4);
    const weights = [1, 0, 0, 1, 1];
    const segments = segmenter.closedSegments(msgs, farFuture, ts, (m) => weights[m.id]);
    expect(ids(segments)).toEqual([[0, 1, 2, 3], [4]]);
  });
});

describe("ConversationSegmenter: open trailing conversation", () => {
  const msgs = run(3, 0);
  const last = msgs[2].t;
  const segmenter = new ConversationSegmenter();

  it("withholds the trailing segment until it has been quiet longer than settle", () => {
    expect(segmenter.closedSegments(msgs, last + HOUR, ts)).toEqual([]);
    expect(segmenter.closedSegments(msgs, last + DEFAULT_SETTLE_MS, ts)).toEqual([]);
    expect(ids(segmenter.closedSegments(msgs, last + DEFAULT_SETTLE_MS + 1, ts))).toEqual([
      [0, 1, 2],
    ]);
  });

  it("leaves the trailing segment open when now precedes the last item", () => {
    expect(segmenter.closedSegments(msgs, last - 10 * DAY, ts)).toEqual([]);
  });

  it("closes earlier segments while the trailing one is open", () => {
    const capped = new ConversationSegmenter({ maxSize: 2 });
    const stream = [...run(2, 0), ...run(2, 2 * DAY, 2), ...run(3, 4 * DAY, 4)];
    const now = stream[6].t + HOUR;
    // Second conversation closed by silence; third carved [4,5] [6]: [4,5] is closed because
    // content follows it, [6] is the open tail and is withheld.
    expect(ids(capped.closedSegments(stream, now, ts))).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
    ]);
  });

  it("accepts Date values for now and timestamps", () => {
    const dated = msgs.map((m) => ({ id: m.id, at: new Date(m.t) }));
    const closed = segmenter.closedSegments(dated, new Date(last + DAY + 1), (m) => m.at);
    expect(closed.map((s) => s.map((m) => m.id))).toEqual([[0, 1, 2]]);
    expect(segmenter.closedSegments(dated, new Date(last + DAY), (m) => m.at)).toEqual([]);
  });
});

describe("ConversationSegmenter: minItems", () => {
  it("places cuts so that no head segment falls below minItems", () => {
    const segmenter = new ConversationSegmenter({ maxSize: 5, minItems: 3 });
    // The widest gap is before item 1, which would strand item 0 alone; k starts at 3.
    const msgs = atMinutes(0, 60, 61, 62, 63, 64, 65, 66);
    expect(ids(segmenter.closedSegments(msgs, farFuture, ts))).toEqual([
      [0, 1, 2, 3, 4],
      [5, 6, 7],
    ]);
  });

  it("folds a settled undersized tail into the segment before it", () => {
    const segmenter = new ConversationSegmenter({ maxSize: 4, minItems: 2 });
    const msgs = atMinutes(0, 1, 2, 3, 10);
    // Carved [0..3] [4]; [4] is settled and below 2 items, so it joins the previous segment.
    expect(ids(segmenter.closedSegments(msgs, farFuture, ts))).toEqual([[0, 1, 2, 3, 4]]);
  });

  it("withholds an undersized open tail rather than folding it", () => {
    const segmenter = new ConversationSegmenter({ maxSize: 4, minItems: 2 });
    const msgs = atMinutes(0, 1, 2, 3, 10);
    expect(ids(segmenter.closedSegments(msgs, msgs[4].t + HOUR, ts))).toEqual([[0, 1, 2, 3]]);
  });

  it("folds only within a conversation", () => {
    const segmenter = new ConversationSegmenter({ maxSize: 3, minItems: 2 });
    const msgs = [...run(3, 0), ...run(1, 3 * DAY, 3)];
    // The lone item is a whole conversation below the floor: dropped, not folded across.
    expect(ids(segmenter.closedSegments(msgs, farFuture, ts))).toEqual([[0, 1, 2]]);
  });

  it("drops a whole conversation shorter than minItems", () => {
    const segmenter = new ConversationSegmenter({ minItems: 3 });
    const msgs = [...run(2, 0), ...run(3, 5 * DAY, 2)];
    expect(ids(segmenter.closedSegments(msgs, farFuture, ts))).toEqual([[2, 3, 4]]);
  });

  it("discards every carved segment when minItems exceeds what maxSize admits", () => {
    const segmenter = new ConversationSegmenter({ maxSize: 2, minItems: 3 });
    const msgs = run(10, 0);
    // Open: pieces of 2 items, all below the floor, and the tail is withheld.
    expect(segmenter.closedSegments(msgs, msgs[9].t, ts)).toEqual([]);
    // Settled: the undersized last piece still folds into the one before it (the spec's step 5),
    // and that merged piece of 4 is the only survivor.
    expect(ids(segmenter.closedSegments(msgs, farFuture, ts))).toEqual([[6, 7, 8, 9]]);
  });

  it("lets a folded segment exceed maxSize by up to minItems - 1 items", () => {
    const segmenter = new ConversationSegmenter({ maxSize: 5, minItems: 3 });
    const msgs = run(7, 0);
    const segments = segmenter.closedSegments(msgs, farFuture, ts);
    expect(ids(segments)).toEqual([[0, 1, 2, 3, 4, 5, 6]]);
  });
});

describe("ConversationSegmenter: ordering and accessors", () => {
  it("returns an empty result for empty input", () => {
    expect(new ConversationSegmenter().closedSegments([], 0, ts)).toEqual([]);
  });

  it("sorts out-of-order input by timestamp", () => {
    const msgs: Msg[] = [
      { id: 2, t: 3 * MINUTE },
      { id: 0, t: 0 },
      { id: 3, t: 3 * DAY },
      { id: 1, t: MINUTE },
    ];
    expect(ids(new ConversationSegmenter().closedSegments(msgs, farFuture, ts))).toEqual([
      [0, 1, 2],
      [3],
    ]);
  });

  it("keeps input order among tied timestamps", () => {
    const msgs: Msg[] = [
      { id: 9, t: MINUTE },
      { id: 4, t: 0 },
      { id: 7, t: MINUTE },
      { id: 1, t: MINUTE },
      { id: 3, t: 0 },
    ];
    expect(ids(new ConversationSegmenter().closedSegments(msgs, farFuture, ts))).toEqual([
      [4, 3, 9, 7, 1],
    ]);
  });

  it("calls each accessor exactly once per item", () => {
    const msgs = [...atMinutes(5, 1, 3, 2, 4), ...run(4, 3 * DAY, 5)];
    const timestampCalls = new Map<Msg, number>();
    const sizeCalls = new Map<Msg, number>();
    new ConversationSegmenter({ maxSize: 3, minItems: 2 }).closedSegments(
      msgs,
      farFuture,
      (m) => {
        timestampCalls.set(m, (timestampCalls.get(m) ?? 0) + 1);
        return m.t;
      },
      (m) => {
        sizeCalls.set(m, (sizeCalls.get(m) ?? 0) + 1);
        return 1;
      },
    );
    expect([...timestampCalls.values()]).toEqual(msgs.map(() => 1));
    expect([...sizeCalls.values()]).toEqual(msgs.map(() => 1));
  });

  it("returns the original item objects", () => {
    const msgs = run(3, 0);
    const [segment] = new ConversationSegmenter().closedSegments(msgs, farFuture, ts);
    segment.forEach((m, i) => {
      expect(m).toBe(msgs[i]);
    });
  });
});

describe("ConversationSegmenter: validation", () => {
  it.each([
    [{ maxSize: 0 }, /maxSize/],
    [{ maxSize: -3 }, /maxSize/],
    [{ maxSize: 2.5 }, /maxSize/],
    [{ maxSize: Number.NaN }, /maxSize/],
    [{ maxSize: Number.POSITIVE_INFINITY }, /maxSize/],
    [{ minItems: 0 }, /minItems/],
    [{ minItems: 1.5 }, /minItems/],
    [{ minItems: Number.NaN }, /minItems/],
    [{ settle: -1 }, /settle/],
    [{ settle: Number.NaN }, /settle/],
    [{ settle: Number.POSITIVE_INFINITY }, /settle/],
  ])("rejects options %o", (options, message) => {
    expect(() => new ConversationSegmenter(options)).toThrow(RangeError);
    expect(() => new ConversationSegmenter(options)).toThrow(message);
  });

  it("uses the reference defaults", () => {
    const segmenter = new ConversationSegmenter();
    expect([segmenter.maxSize, segmenter.settle, segmenter.minItems]).toEqual([500, DAY, 1]);
  });

  it("accepts a fractional settle", () => {
    expect(new ConversationSegmenter({ settle: 0.5 }).settle).toBe(0.5);
  });

  it("names the item whose timestamp is invalid", () => {
    const msgs = [...run(3, 0), { id: 3, t: Number.NaN }];
    const segmenter = new ConversationSegmenter();
    expect(() => segmenter.closedSegments(msgs, 0, ts)).toThrow(RangeError);
    expect(() => segmenter.closedSegments(msgs, 0, ts)).toThrow(/timestamp of item 3/);
    expect(() => segmenter.closedSegments(run(2, 0), 0, () => new Date("nope"))).toThrow(
      /timestamp of item 0/,
    );
  });

  it.each([
    [-1, /size of item 1/],
    [Number.NaN, /size of item 1/],
    [Number.POSITIVE_INFINITY, /size of item 1/],
  ])("names the item whose size is %s", (bad, message) => {
    const segmenter = new ConversationSegmenter();
    const size = (m: Msg) => (m.id === 1 ? bad : 1);
    expect(() => segmenter.closedSegments(run(3, 0), 0, ts, size)).toThrow(RangeError);
    expect(() => segmenter.closedSegments(run(3, 0), 0, ts, size)).toThrow(message);
  });

  it("rejects an invalid now", () => {
    const segmenter = new ConversationSegmenter();
    expect(() => segmenter.closedSegments(run(2, 0), Number.NaN, ts)).toThrow(RangeError);
    expect(() => segmenter.closedSegments(run(2, 0), new Date("x"), ts)).toThrow(/now/);
  });
});

describe("openConversationStart", () => {
  const at = (...ts: number[]) => ts.map((t) => ({ ts: t }));

  it("is the start of the trailing conversation while it may still grow, else the length", () => {
    const items = at(0, 100, 500, 520, 530);
    // A gap over settle (100) before 500: the open conversation starts there.
    expect(openConversationStart(items, 100, 600)).toBe(2);
    // Exactly settle since the last item is still open; one more is settled.
    expect(openConversationStart(items, 100, 630)).toBe(2);
    expect(openConversationStart(items, 100, 631)).toBe(5);
    // A gap of exactly settle does not end a conversation.
    expect(openConversationStart(at(0, 100, 200), 100, 200)).toBe(0);
    expect(openConversationStart([], 100, 0)).toBe(0);
  });
});
