import { parseTime } from "../../base/duration/index.js";
import { DigestError, MAX_PERIOD_DAYS } from "./errors.js";
import { thousands, utcDate } from "./text.js";

const DAY_MS = 86_400_000;
/** A week: the period a digest covers when no `--since` is given. */
const WEEK_MS = 7 * DAY_MS;

/**
 * The time `text` names, relative to `now`: a duration back from it (`7d`, `24h`, `2w`, `90m`;
 * not `0d`) or an ISO date (UTC midnight) or time with its zone. A {@link DigestError} naming
 * `flag` otherwise.
 */
function parseSince(text: string, now: number, flag: string): { at: number; back?: number } {
  // Any length: one past what a digest covers is said as such by askedPeriod, not here.
  const time = parseTime(text, now, Number.POSITIVE_INFINITY);
  if (time !== undefined && time.back !== 0) return time;
  throw new DigestError(
    "DIGEST_BAD_TIME",
    `${flag} must be a duration (7d, 24h, 2w) or an ISO date or time (2026-01-31, 2026-01-31T08:00Z) (got ${JSON.stringify(text.slice(0, 40))})`,
  );
}

export interface AskedPeriod {
  /** `--since` as given: a duration back from the period's end, or an ISO date or time. */
  since?: string;
  /** `--until` as given: a duration back from `end`, or an ISO date or time. */
  until?: string;
  /** What `--until` defaults to and durations count back from (now, or the data's end). */
  end: number;
  /** How a message names `end`: `now`, `the end of the stored chat (2018-05-30)`. */
  endName: string;
}

/**
 * The half-open period [since, until) asked for: `until` is `--until` (default `end`) and
 * `since` is `--since` (default a week before `until`); a duration given as `--since` counts back
 * from `until`, so that `--since 7d --until 2018-06-01` is the week before it. A
 * {@link DigestError} naming the flags, and what to give instead, when the period is empty,
 * reversed or longer than {@link MAX_PERIOD_DAYS}.
 */
export function askedPeriod(asked: AskedPeriod): { since: number; until: number } {
  const until =
    asked.until === undefined ? asked.end : parseSince(asked.until, asked.end, "--until").at;
  if (asked.since === undefined) return { since: until - WEEK_MS, until };
  const { at: since, back } = parseSince(asked.since, until, "--since");
  const to = asked.until === undefined ? asked.endName : `--until ${asked.until}`;
  if (since >= until) {
    throw new DigestError(
      "DIGEST_BAD_PERIOD",
      `--since ${asked.since} is not before ${to}: the period is empty`,
    );
  }
  const days = Math.ceil((until - since) / DAY_MS);
  if (days > MAX_PERIOD_DAYS) {
    const fix =
      back !== undefined
        ? `give a shorter --since (at most ${MAX_PERIOD_DAYS}d)`
        : asked.until !== undefined
          ? `bring --since and --until within ${MAX_PERIOD_DAYS} days of each other`
          : `add --until ${utcDate(since + WEEK_MS)} for a week (or any date to ${utcDate(since + MAX_PERIOD_DAYS * DAY_MS)})`;
    throw new DigestError(
      "DIGEST_BAD_PERIOD",
      `--since ${asked.since} to ${to} is ${thousands(days)} days; a digest covers at most ${MAX_PERIOD_DAYS} days: ${fix}`,
    );
  }
  return { since, until };
}
