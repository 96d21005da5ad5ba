import { formatDuration, nextUtcMidnight, parseDuration } from "convoseg/duration";
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

describe("nextUtcMidnight", () => {
  it("ends the UTC day a time falls in, a midnight itself included", () => {
    expect(nextUtcMidnight(Date.UTC(2018, 4, 29, 23, 59))).toBe(Date.UTC(2018, 4, 30));
    expect(nextUtcMidnight(Date.UTC(2018, 4, 30))).toBe(Date.UTC(2018, 4, 31));
  });
});
