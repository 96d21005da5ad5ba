/**
 * The 8 tests of the original's `log_normalize_tests.rs` (`docs/specs/transcript.md` §8). Only the
 * recognized prefix is ported (segmentation asks whether a line has one), so each test checks the
 * prefix the original masks instead of the masked string.
 */
import { describe, expect, it } from "vitest";
import { volatilePrefixLength } from "../../../lib/intake/transcript/log-prefix.js";
import { utf8 } from "./support.js";

/** The volatile prefix of `line`, as text. */
function prefixOf(line: string): string {
  const bytes = utf8(line);
  return new TextDecoder().decode(bytes.subarray(0, volatilePrefixLength(bytes, 0, bytes.length)));
}

describe("volatilePrefixLength: the original's log-prefix tests", () => {
  it("1. strips an ISO timestamp with millis and Z", () => {
    expect(prefixOf("2026-07-18T10:23:45.123Z INFO canary check passed")).toBe(
      "2026-07-18T10:23:45.123Z",
    );
  });

  it("2. strips an ISO timestamp with comma millis and an offset", () => {
    expect(prefixOf("2026-07-18 10:23:45,123+02:00 WARN retrying upstream")).toBe(
      "2026-07-18 10:23:45,123+02:00",
    );
  });

  it("3. strips a syslog timestamp with a single-digit day", () => {
    expect(prefixOf("Jul  8 10:23:45 ERROR timeout connecting to shard-3")).toBe("Jul  8 10:23:45");
  });

  it("4. strips bracketed hex counters after a timestamp", () => {
    expect(prefixOf("2026-07-18T10:23:45Z [a1b2c3] INFO canary check passed")).toBe(
      "2026-07-18T10:23:45Z [a1b2c3]",
    );
    expect(prefixOf("Jul 18 10:23:45[12][deadbeef] [ERROR] x")).toBe(
      "Jul 18 10:23:45[12][deadbeef]",
    );
  });

  it("5. never masks a bracketed token without a timestamp", () => {
    expect(prefixOf("[12345] worker restarted")).toBe("");
    expect(prefixOf("[abc] deploy done")).toBe("");
  });

  it("6. leaves a [ERROR] level tag alone", () => {
    expect(prefixOf("[ERROR] shard-3 timeout")).toBe("");
    expect(prefixOf("2026-07-18T10:23:45Z [ERROR] shard-3 timeout")).toBe("2026-07-18T10:23:45Z");
    expect(prefixOf("2026-07-18T10:23:45Z [shard-3] up")).toBe("2026-07-18T10:23:45Z");
  });

  it("7. finds no prefix in a line without one", () => {
    expect(prefixOf("canary check passed for shard-1")).toBe("");
  });

  it("8. does not take a masked or literal <TS> line for a timestamped one", () => {
    expect(prefixOf("<TS> worker restarted")).toBe("");
    expect(prefixOf("\u0000TS\u0000 worker restarted")).toBe("");
  });
});

describe("volatilePrefixLength: the forms' boundaries", () => {
  it.each([
    ["9999-99-99T99:99:99", "9999-99-99T99:99:99"],
    ["2026-07-18T10:23:45. x", "2026-07-18T10:23:45"],
    ["2026-07-18T10:23:45+02 x", "2026-07-18T10:23:45"],
    ["2026-07-18T10:23:45.5-05:30", "2026-07-18T10:23:45.5-05:30"],
    ["2026-07-18  10:23:45", ""],
    ["2026-07-18T10:23", ""],
    ["26-07-18T10:23:45", ""],
    ["Jul 18 10:23:45", "Jul 18 10:23:45"],
    ["jul 18 10:23:45", ""],
    ["Jul 8 10:23:45", ""],
    ["Jul 18 10:23:45 [] x", "Jul 18 10:23:45"],
    ["Jul 18 10:23:45  [1] x", "Jul 18 10:23:45"],
  ])("%j has the prefix %j", (line, prefix) => {
    expect(prefixOf(line)).toBe(prefix);
  });

  it("stops at the end of the line it is given", () => {
    const bytes = utf8("2026-07-18T10:23:45Z [1]");
    expect(volatilePrefixLength(bytes, 0, 19)).toBe(19);
    expect(volatilePrefixLength(bytes, 0, 23)).toBe(20);
    expect(volatilePrefixLength(bytes, 0, 18)).toBe(0);
  });
});
