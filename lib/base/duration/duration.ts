/**
 * Durations as people write them in flags and configuration: `90s`, `15m`, `24h`, `2d`, `250ms`,
 * or a bare number of milliseconds; and times as flags and query parameters take them: a
 * duration back from a clock (`7d`, `2w`) or an ISO date or time.
 */

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/;
/** A duration back from a clock: a unit is required, as a bare number is surely a mistake there. */
const BACK = /^(\d+(?:\.\d+)?)(s|m|h|d|w)$/;
/** `2026-01-31`, or a full ISO 8601 time with its zone (`2026-01-31T08:00Z`, `…T08:00:00.250+02:00`). */
const ISO_TIME =
  /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

/**
 * The longest duration accepted: a year. Longer ones are mistakes (a settle time in seconds
 * taken for milliseconds), and every timestamp plus a few of them stays an exact number.
 */
const MAX_DURATION_MS = 365 * UNIT_MS.d;

/**
 * Milliseconds in `text`. Throws a RangeError naming `name` when `text` is not a non-negative
 * number with an optional unit, does not come to a whole number of milliseconds, or exceeds
 * {@link MAX_DURATION_MS}.
 */
export function parseDuration(text: string, name = "duration"): number {
  const match = DURATION.exec(text.trim());
  const ms = match ? Number(match[1]) * UNIT_MS[match[2] ?? "ms"] : Number.NaN;
  if (!Number.isSafeInteger(ms)) {
    throw new RangeError(
      `${name} must be a duration such as 90s, 15m, 24h, 2d or whole milliseconds (got ${JSON.stringify(text)})`,
    );
  }
  if (ms > MAX_DURATION_MS) {
    throw new RangeError(`${name} must be at most 365 days (got ${JSON.stringify(text)})`);
  }
  return ms;
}

/**
 * The time `text` names, as `--since`, `?until=` and the like take one: a duration back from
 * `now` (`90m`, `24h`, `7d`, `2w`; a unit is required, and a fraction is rounded to the ms) of
 * at most `longest` ms (default a year), or an ISO date (its UTC midnight) or time with its zone
 * (`2026-01-31`, `2026-01-31T08:00Z`): `at`, its epoch ms, and of a duration `back`, the ms it
 * counts back. Undefined when it is none of these, for the caller to say so in its own words,
 * naming its own flag or parameter.
 */
export function parseTime(
  text: string,
  now: number,
  longest = MAX_DURATION_MS,
): { at: number; back?: number } | undefined {
  const trimmed = text.trim();
  if (ISO_TIME.test(trimmed)) {
    const at = Date.parse(trimmed.length === 10 ? `${trimmed}T00:00:00Z` : trimmed);
    return Number.isFinite(at) ? { at } : undefined;
  }
  const match = BACK.exec(trimmed);
  if (match === null) return undefined;
  const back = Math.round(Number(match[1]) * UNIT_MS[match[2]]);
  return Number.isSafeInteger(back) && back <= longest && Number.isSafeInteger(now - back)
    ? { at: now - back, back }
    : undefined;
}

/** A short human reading of a duration: `0s`, `45s`, `12m 5s`, `3h 20m`, `2d 4h`, `250ms`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return ms === 0 ? "0s" : `${Math.round(ms)}ms`;
  const parts: [number, string][] = [
    [Math.floor(ms / UNIT_MS.d), "d"],
    [Math.floor(ms / UNIT_MS.h) % 24, "h"],
    [Math.floor(ms / UNIT_MS.m) % 60, "m"],
    [Math.floor(ms / UNIT_MS.s) % 60, "s"],
  ];
  const first = parts.findIndex(([value]) => value > 0);
  return parts
    .slice(first, first + 2)
    .filter(([value]) => value > 0)
    .map(([value, unit]) => `${value}${unit}`)
    .join(" ");
}

/**
 * Whether a time is shorter than the clock of a second or more it was measured by (`clockMs`:
 * two times in the same minute of a log that keeps minutes), so known only to be under it.
 */
export function underClock(ms: number, clockMs = 1): boolean {
  return clockMs > 1 && ms < clockMs;
}

/** `formatDuration`, but a time {@link underClock} is said to be under it: "under 1m", not "0s". */
export function formatElapsed(ms: number, clockMs = 1): string {
  return underClock(ms, clockMs) ? `under ${formatDuration(clockMs)}` : formatDuration(ms);
}

/**
 * The UTC midnight after `ms`: where a period that takes in the whole day of `ms` ends (a
 * digest of the data's last week ends with the day of its last message).
 */
export const nextUtcMidnight = (ms: number): number => (Math.floor(ms / UNIT_MS.d) + 1) * UNIT_MS.d;
