import { MAX_TIMESTAMP_MS } from "convoseg/identity";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { contentId, isoTimestamp, Repeats } from "../../../lib/intake/exports/ids.js";

describe("export timestamps and content ids", () => {
  it("writes timestamps exactly as toISOString does, within the accepted window only", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_TIMESTAMP_MS }), (ms) => {
        expect(isoTimestamp(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 2000 },
    );
    expect(isoTimestamp(-1)).toBeUndefined();
    expect(isoTimestamp(MAX_TIMESTAMP_MS + 1)).toBeUndefined();
    expect(isoTimestamp(1.5)).toBeUndefined();
  });

  it("makes ids from content and ordinal alone, counting exact repeats", () => {
    const repeats = new Repeats();
    const parts = ["2024-01-01T00:00:00.000Z", "Ana", "ok"];
    expect([repeats.next(parts), repeats.next(parts), repeats.next(["x"])]).toEqual([0, 1, 0]);
    expect(contentId(parts, 0)).toBe(contentId([...parts], 0));
    expect(contentId(parts, 0)).not.toBe(contentId(parts, 1));
    // Parts are kept apart: moving text across a boundary changes the id.
    expect(contentId(["a:b", "c"], 0)).not.toBe(contentId(["a", "b:c"], 0));
  });
});
