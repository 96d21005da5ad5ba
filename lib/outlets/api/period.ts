/**
 * The period of the digest and stats routes (`?since=`, `?until=`), read as the CLI reads its
 * flags.
 */
import { askedPeriod, DigestError } from "../digest/index.js";
import { ApiParameterError } from "./errors.js";
import { DIGEST_PERIOD } from "./limits.js";

/** The period's end is now rounded down to this, so that its ETag holds for a while. */
const DIGEST_GRAIN_MS = 60_000;

/**
 * The digest's period as the CLI reads its flags (lib/outlets/digest's askedPeriod): `until`
 * (default now) and `since` (default a week before it), each a duration back (`since` from
 * `until`, `until` from now) or an ISO date or time; from 1 h to 366 days. Now is rounded down
 * to the minute, so that a period relative to it keeps its ETag for a while; imported history
 * is asked for in dates, and keeps it for good.
 */
export function digestPeriod(
  since: string | undefined,
  until: string | undefined,
  now: number,
): { since: number; until: number } {
  const end = Math.floor(now / DIGEST_GRAIN_MS) * DIGEST_GRAIN_MS;
  const asked = (given: { since?: string; until?: string }) => {
    try {
      return askedPeriod({ ...given, end, endName: "now" });
    } catch (error) {
      if (error instanceof DigestError) return error;
      throw error;
    }
  };
  if (until !== undefined && asked({ until }) instanceof DigestError) {
    throw new ApiParameterError("until", `must be ${TIME_FORMS} (a duration back from now)`);
  }
  const period = asked({ since, until });
  const span = `the period must be from 1h to ${DIGEST_PERIOD.maxMs / DAY_MS}d, since before until`;
  if (period instanceof DigestError) {
    throw new ApiParameterError(
      "since",
      period.code === "DIGEST_BAD_TIME"
        ? `must be ${TIME_FORMS} (a duration back from until)`
        : span,
    );
  }
  if (period.until - period.since < DIGEST_PERIOD.minMs) throw new ApiParameterError("since", span);
  return period;
}

const TIME_FORMS = "a duration (7d, 36h) or an ISO date or time (2026-01-05, 2026-01-05T08:00Z)";
const DAY_MS = 86_400_000;
