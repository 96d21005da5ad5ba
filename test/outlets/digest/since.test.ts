import { DigestError, parseSince } from "convoseg/digest";
import { describe, expect, it } from "vitest";

const now = new Date(Date.UTC(2026, 0, 31, 12));
const HOUR = 3_600_000;

describe("parseSince", () => {
  it("reads a duration back from now and an ISO date or time", () => {
    expect(parseSince("7d", now)).toBe(now.getTime() - 7 * 24 * HOUR);
    expect(parseSince("24h", now)).toBe(now.getTime() - 24 * HOUR);
    expect(parseSince("2w", now)).toBe(now.getTime() - 14 * 24 * HOUR);
    expect(parseSince(" 90m ", now)).toBe(now.getTime() - 1.5 * HOUR);
    expect(parseSince("2026-01-05", now)).toBe(Date.UTC(2026, 0, 5));
    expect(parseSince("2026-01-05T08:30Z", now)).toBe(Date.UTC(2026, 0, 5, 8, 30));
    expect(parseSince("2026-01-05T08:30:00+02:00", now)).toBe(Date.UTC(2026, 0, 5, 6, 30));
  });

  it("refuses anything else with a DigestError naming the flag", () => {
    for (const bad of ["", "7", "0d", "seven days", "2026-13-45", "2026-01-05T08:30", "-3d"]) {
      let error: unknown;
      try {
        parseSince(bad, now);
      } catch (e) {
        error = e;
      }
      expect(error, bad).toBeInstanceOf(DigestError);
      expect((error as DigestError).code).toBe("DIGEST_BAD_TIME");
      expect((error as Error).message).toMatch(/^--since must be/);
    }
    expect(() => parseSince("x", now, "--until")).toThrow(/^--until must be/);
  });
});
