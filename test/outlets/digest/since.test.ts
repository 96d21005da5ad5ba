import { askedPeriod, DigestError } from "convoseg/digest";
import { describe, expect, it } from "vitest";

const now = Date.UTC(2026, 0, 31, 12);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The period `since` (and `until`) name, ending by default at `now`. */
const period = (since?: string, until?: string, end = now) =>
  askedPeriod({ since, until, end, endName: "now" });

/** The DigestError `ask` throws. */
function refusal(ask: () => unknown): DigestError {
  try {
    ask();
  } catch (error) {
    if (error instanceof DigestError) return error;
    throw error;
  }
  throw new Error("not refused");
}

describe("askedPeriod", () => {
  it("reads a duration back from the end and an ISO date or time", () => {
    expect(period("7d").since).toBe(now - 7 * DAY);
    expect(period("24h").since).toBe(now - DAY);
    expect(period("2w").since).toBe(now - 14 * DAY);
    expect(period(" 90m ").since).toBe(now - 1.5 * HOUR);
    expect(period("1.1h").since).toBe(now - 66 * 60_000);
    expect(period("2026-01-05").since).toBe(Date.UTC(2026, 0, 5));
    expect(period("2026-01-05T08:30Z").since).toBe(Date.UTC(2026, 0, 5, 8, 30));
    expect(period("2026-01-05T08:30:00+02:00").since).toBe(Date.UTC(2026, 0, 5, 6, 30));
    expect(period("7d").until).toBe(now);
  });

  it("is the week before its end without --since, and a --since duration counts back from --until", () => {
    expect(period()).toEqual({ since: now - 7 * DAY, until: now });
    expect(period(undefined, "2018-06-01")).toEqual({
      since: Date.UTC(2018, 4, 25),
      until: Date.UTC(2018, 5, 1),
    });
    expect(period("3d", "2018-06-01").since).toBe(Date.UTC(2018, 4, 29));
    // --until as a duration counts back from the end, --since then from it.
    expect(period("1d", "2d")).toEqual({ since: now - 3 * DAY, until: now - 2 * DAY });
  });

  it("refuses a time that is none with DIGEST_BAD_TIME naming its flag", () => {
    for (const bad of ["", "7", "0d", "seven days", "2026-13-45", "2026-01-05T08:30", "-3d"]) {
      const error = refusal(() => period(bad));
      expect(error.code, bad).toBe("DIGEST_BAD_TIME");
      expect(error.message).toMatch(/^--since must be a duration \(7d, 24h, 2w\) or an ISO date/);
    }
    expect(refusal(() => period("7d", "x")).message).toMatch(/^--until must be/);
  });

  it("refuses an empty or reversed period, naming both flags", () => {
    const after = refusal(() => period("2026-02-01"));
    expect(after.code).toBe("DIGEST_BAD_PERIOD");
    expect(after.message).toBe("--since 2026-02-01 is not before now: the period is empty");
    expect(refusal(() => period("2018-06-02", "2018-06-01")).message).toBe(
      "--since 2018-06-02 is not before --until 2018-06-01: the period is empty",
    );
  });

  it("refuses more than 366 days, saying how long it is and what to give instead", () => {
    const end = Date.UTC(2025, 10, 28);
    const long = refusal(() => askedPeriod({ since: "2018-05-29", end, endName: "now" }));
    expect(long.code).toBe("DIGEST_BAD_PERIOD");
    expect(long.message).toBe(
      "--since 2018-05-29 to now is 2,740 days; a digest covers at most 366 days: add --until 2018-06-05 for a week (or any date to 2019-05-30)",
    );
    expect(refusal(() => period("400d")).message).toBe(
      "--since 400d to now is 400 days; a digest covers at most 366 days: give a shorter --since (at most 366d)",
    );
    expect(refusal(() => period("2018-01-01", "2020-01-01")).message).toMatch(
      /^--since 2018-01-01 to --until 2020-01-01 is 730 days; .*: bring --since and --until within 366 days of each other$/,
    );
    expect(period("366d")).toEqual({ since: now - 366 * DAY, until: now });
  });
});
