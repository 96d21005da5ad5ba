import {
  formatDuration,
  formatElapsed,
  nextUtcMidnight,
  parseDuration,
  parseTime,
} from "convoseg/duration";
import { describe, expect, it } from "vitest";

describe("parseDuration", () => {
  it.each([
    ["90s", 90_000],
    ["15m", 900_000],
    ["24h", 86_400_000],
    ["2d", 172_800_000],
    ["250ms", 250],
    ["1500", 1500],
    ["0", 0],
    ["1.5h", 5_400_000],
    [" 3m ", 180_000],
    ["365d", 365 * 86_400_000],
  ])("reads %s as %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    "",
    "-5m",
    "5 m",
    "5w",
    "abc",
    "1.5",
    "0.0001s",
    "1e3",
    "m",
    "366d",
    "9007199254740991",
  ])("rejects %j naming the setting", (text) => {
    expect(() => parseDuration(text, "--settle")).toThrow(RangeError);
    expect(() => parseDuration(text, "--settle")).toThrow(/--settle/);
  });
});

describe("parseTime", () => {
  const now = Date.UTC(2026, 0, 31, 12);
  it.each([
    ["90m", { at: now - 5_400_000, back: 5_400_000 }],
    [" 7d ", { at: now - 7 * 86_400_000, back: 7 * 86_400_000 }],
    ["2w", { at: now - 14 * 86_400_000, back: 14 * 86_400_000 }],
    ["1.1h", { at: now - 3_960_000, back: 3_960_000 }],
    ["0d", { at: now, back: 0 }],
    ["365d", { at: now - 365 * 86_400_000, back: 365 * 86_400_000 }],
    ["2026-01-05", { at: Date.UTC(2026, 0, 5) }],
    ["2026-01-05T08:30Z", { at: Date.UTC(2026, 0, 5, 8, 30) }],
    ["2026-01-05T08:30:00.250+02:00", { at: Date.UTC(2026, 0, 5, 6, 30, 0, 250) }],
  ])("reads %j as a duration back from now or an ISO date or time", (text, time) => {
    expect(parseTime(text, now)).toEqual(time);
  });

  it.each([
    "",
    "7",
    "250ms",
    "-3d",
    "2y",
    "seven days",
    "366d",
    "1e3d",
    "2026-13-45",
    "2026-01-05T08:30",
    "2026-01-05T08Z",
    "2026-01-05T08:30:00.1234Z",
  ])("takes %j for no time", (text) => {
    expect(parseTime(text, now)).toBeUndefined();
  });

  it("takes a longer duration when told to", () => {
    expect(parseTime("400d", now, Number.POSITIVE_INFINITY)?.back).toBe(400 * 86_400_000);
    expect(parseTime("2d", now, 86_400_000)).toBeUndefined();
  });
});

describe("formatDuration", () => {
  it.each([
    [0, "0s"],
    [250, "250ms"],
    [45_000, "45s"],
    [725_000, "12m 5s"],
    [3 * 3_600_000 + 20 * 60_000 + 7_000, "3h 20m"],
    [2 * 86_400_000 + 4 * 3_600_000, "2d 4h"],
    [86_400_000 + 5_000, "1d"],
  ])("shows %d ms as %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe("formatElapsed", () => {
  it("says a time under the clock it was measured by is under it, and no finer clock's", () => {
    expect(formatElapsed(0, 60_000)).toBe("under 1m");
    expect(formatElapsed(59_999, 60_000)).toBe("under 1m");
    expect(formatElapsed(120_000, 60_000)).toBe("2m");
    expect(formatElapsed(0, 1_000)).toBe("under 1s");
    expect(formatElapsed(0)).toBe("0s");
    expect(formatElapsed(0, 1)).toBe("0s");
  });
});

describe("nextUtcMidnight", () => {
  it("ends the UTC day a time falls in, a midnight itself included", () => {
    expect(nextUtcMidnight(Date.UTC(2018, 4, 29, 23, 59))).toBe(Date.UTC(2018, 4, 30));
    expect(nextUtcMidnight(Date.UTC(2018, 4, 30))).toBe(Date.UTC(2018, 4, 31));
  });
});
