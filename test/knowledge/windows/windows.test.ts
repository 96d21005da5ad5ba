import {
  slidingWindows,
  splitNonPrefixWindows,
  splitPrefixWindows,
  splitWindows,
  type Turn,
} from "convoseg/windows";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const user = (content: string): Turn => ({ role: "user", content });
const assistant = (content: string): Turn => ({ role: "assistant", content });
/** The original's `turnsFrom`: user messages only. */
const turnsFrom = (count: number) => Array.from({ length: count }, (_, i) => user(`u${i}`));
/** The original's `mixTurns`: user and "reply x" assistant pairs. */
const mixTurns = (pairs: number) =>
  Array.from({ length: pairs }, (_, i) => [user(`q${i}`), assistant(`reply ${i}`)]).flat();
const lengths = (windows: unknown[][]) => windows.map((w) => w.length);
const users = (window: Turn[]) => window.filter((t) => t.role === "user").length;

describe("splitWindows (the original's TestSplitWindows cases)", () => {
  it("gives no windows for empty input", () => {
    expect(splitWindows([], 4)).toEqual([]);
  });

  it.each([
    [4, 2],
    [3, 3],
    [100, 1],
    [0, 1],
    [-5, 1],
  ])("cuts 8 messages into windows of %i: %i windows that join back to the input", (n, count) => {
    const turns = turnsFrom(8);
    const windows = splitWindows(turns, n);
    expect(windows).toHaveLength(count);
    expect(windows.flat()).toEqual(turns);
  });

  it("falls back to 10 for a non-positive size (TestSplitWindowsZeroFallbackSize)", () => {
    expect(lengths(splitWindows(turnsFrom(11), 0))).toEqual([10, 1]);
  });

  it.each([Number.NaN, 2.5, Number.POSITIVE_INFINITY])(
    "throws a RangeError for a size of %d",
    (n) => {
      expect(() => splitWindows(turnsFrom(3), n)).toThrow(RangeError);
    },
  );
});

describe("splitPrefixWindows", () => {
  it("gives one window of everything under userStep user turns (TestSplitPrefixWindowsByUserTurns)", () => {
    const turns = turnsFrom(3);
    expect(splitPrefixWindows(turns, 5, 8)).toEqual([turns]);
  });

  it("cuts right after every 5th user turn and ends with the whole transcript", () => {
    const turns = mixTurns(12);
    const windows = splitPrefixWindows(turns, 5, 8);
    expect(lengths(windows)).toEqual([9, 19, 24]);
    windows.forEach((window, i) => {
      expect(window).toEqual(turns.slice(0, window.length));
      if (i > 0) expect(window.length).toBeGreaterThan(windows[i - 1].length);
    });
  });

  it("keeps the last (longest) windows under maxWindows (TestSplitPrefixWindowsMaxWindows)", () => {
    expect(lengths(splitPrefixWindows(mixTurns(12), 5, 2))).toEqual([19, 24]);
  });

  it("gives one full window without user turns (TestSplitPrefixWindowsNoUserTurns)", () => {
    const turns = [assistant("a"), assistant("b"), assistant("c")];
    expect(splitPrefixWindows(turns, 5, 8)).toEqual([turns]);
  });

  it("gives no windows for empty input (TestSplitPrefixWindowsEmpty)", () => {
    expect(splitPrefixWindows([], 5, 8)).toEqual([]);
  });

  it("does not repeat the whole transcript when it ends on a boundary user turn", () => {
    const turns = [...mixTurns(4), user("q4")];
    expect(lengths(splitPrefixWindows(turns, 5, 8))).toEqual([9]);
  });

  it("falls back to a step of 5 and no cap for non-positive values, and throws for non-integers", () => {
    expect(lengths(splitPrefixWindows(mixTurns(12), 0, -1))).toEqual([9, 19, 24]);
    expect(() => splitPrefixWindows(mixTurns(2), Number.NaN, 8)).toThrow(RangeError);
    expect(() => splitPrefixWindows(mixTurns(2), 5, 1.5)).toThrow(RangeError);
  });
});

describe("splitNonPrefixWindows", () => {
  it("cuts 12 pairs into windows of 5, 5 and 2 user turns that join back (TestSplitNonPrefixWindows)", () => {
    const turns = mixTurns(12);
    const windows = splitNonPrefixWindows(turns, 5, 8);
    expect(windows.map(users)).toEqual([5, 5, 2]);
    expect(windows.flat()).toEqual(turns);
  });

  it("gives the reply to the last boundary user turn a window of its own", () => {
    expect(lengths(splitNonPrefixWindows(mixTurns(10), 5, 8))).toEqual([9, 10, 1]);
  });

  it("keeps the last windows under maxWindows, dropping the earliest part", () => {
    const turns = mixTurns(12);
    const windows = splitNonPrefixWindows(turns, 5, 2);
    expect(windows.flat()).toEqual(turns.slice(9));
  });

  it("gives [] for empty input and one window under userStep user turns", () => {
    expect(splitNonPrefixWindows([], 5, 8)).toEqual([]);
    expect(splitNonPrefixWindows(mixTurns(2), 5, 8)).toEqual([mixTurns(2)]);
  });
});

describe("slidingWindows", () => {
  it("overlaps each window with the previous one, the last ending at the end", () => {
    const items = Array.from({ length: 45 }, (_, i) => i);
    const windows = slidingWindows(items, 20, 2);
    expect(windows.map((w) => [w[0], w.at(-1)])).toEqual([
      [0, 19],
      [18, 37],
      [36, 44],
    ]);
  });

  it("gives [] for empty input and one window when everything fits", () => {
    expect(slidingWindows([], 20, 2)).toEqual([]);
    expect(slidingWindows([1, 2, 3], 20, 2)).toEqual([[1, 2, 3]]);
  });

  it.each([
    [0, 0],
    [1.5, 0],
    [5, 5],
    [5, -1],
    [5, 1.5],
    [Number.NaN, 0],
  ])("rejects windowSize %d with overlap %d", (size, overlap) => {
    expect(() => slidingWindows([1, 2, 3], size, overlap)).toThrow(RangeError);
  });
});

/** Transcripts of user, assistant, tool and system turns. */
const transcripts = fc.array(
  fc.record({
    role: fc.constantFrom("user", "user", "assistant", "tool", "system"),
    content: fc.string({ maxLength: 3 }),
  }),
  { maxLength: 60 },
);

describe("window properties", () => {
  it("prefix windows form a strict prefix chain ending in the whole transcript", () => {
    fc.assert(
      fc.property(
        transcripts,
        fc.integer({ min: -2, max: 7 }),
        fc.integer({ min: -1, max: 5 }),
        (turns, step, cap) => {
          const windows = splitPrefixWindows(turns, step, cap);
          if (turns.length === 0) {
            expect(windows).toEqual([]);
            return;
          }
          expect(windows.at(-1)).toEqual(turns);
          windows.forEach((window, i) => {
            expect(window).toEqual(turns.slice(0, window.length));
            if (i > 0) expect(window.length).toBeGreaterThan(windows[i - 1].length);
          });
          if (cap > 0) expect(windows.length).toBeLessThanOrEqual(cap);
        },
      ),
    );
  });

  it("non-prefix windows cover the transcript (or its end, under a cap) in order, without overlap", () => {
    fc.assert(
      fc.property(
        transcripts,
        fc.integer({ min: -2, max: 7 }),
        fc.integer({ min: -1, max: 5 }),
        (turns, step, cap) => {
          const windows = splitNonPrefixWindows(turns, step, cap);
          const joined = windows.flat();
          expect(joined).toEqual(turns.slice(turns.length - joined.length));
          if (cap <= 0) expect(joined).toEqual(turns);
          expect(windows.every((w) => w.length > 0)).toBe(true);
        },
      ),
    );
  });

  it("sliding windows cover the items in order, each overlapping the previous by `overlap`", () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(), { maxLength: 80 }),
        fc
          .integer({ min: 1, max: 12 })
          .chain((size) => fc.tuple(fc.constant(size), fc.integer({ min: 0, max: size - 1 }))),
        (items, [size, overlap]) => {
          const windows = slidingWindows(items, size, overlap);
          let start = 0;
          windows.forEach((window, i) => {
            expect(window).toEqual(items.slice(start, start + window.length));
            expect(window.length).toBeLessThanOrEqual(size);
            if (i < windows.length - 1) expect(window.length).toBe(size);
            start += window.length - overlap;
          });
          expect(windows.at(-1)?.at(-1)).toBe(items.at(-1));
        },
      ),
    );
  });
});
