/** Timestamps as the output writes them, and ids made from content for formats without ids. */
import { createHash } from "node:crypto";
import { isAcceptedTimestamp } from "../../base/identity/index.js";

/** `YYYY-MM-DDT` of each day met: most of `toISOString`'s cost, which dominated parsing. */
const dayPrefixes = new Map<number, string>();
const MS_PER_DAY = 86_400_000;

/** ISO 8601 UTC with milliseconds, or undefined outside the timestamps convoseg accepts. */
export function isoTimestamp(ms: number): string | undefined {
  if (!Number.isInteger(ms) || !isAcceptedTimestamp(ms)) return undefined;
  const day = Math.floor(ms / MS_PER_DAY);
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    if (dayPrefixes.size > 100_000) dayPrefixes.clear();
    prefix = new Date(day * MS_PER_DAY).toISOString().slice(0, 11);
    dayPrefixes.set(day, prefix);
  }
  let rest = ms - day * MS_PER_DAY;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const millis = rest - seconds * 1000;
  return `${prefix}${two(hours)}:${two(minutes)}:${two(seconds)}.${millis < 10 ? "00" : millis < 100 ? "0" : ""}${millis}Z`;
}

function two(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

/**
 * A stable id made from a message's content and its ordinal among exact repeats (0 for the
 * first): the same message gets the same id in every export that holds it, whatever the file or
 * line, so overlapping exports deduplicate. 22 base64url characters (132 bits of SHA-256).
 */
export function contentId(parts: readonly (string | number)[], ordinal: number): string {
  return createHash("sha256")
    .update(JSON.stringify([...parts, ordinal]))
    .digest("base64url")
    .slice(0, 22);
}

/** Messages of one logged time kept in order by milliseconds; past this many, by id. */
const MAX_SAME = 999;

/**
 * The order of a file whose times are minutes or seconds (WhatsApp, IRC logs): the k-th message
 * of one logged time is k milliseconds later, since every reader of a channel orders by time,
 * then id, and ids made from content would shuffle a minute's messages (an answer before its
 * question). Feed it each message's time in the file's order.
 */
export class LoggedOrder {
  private previous = Number.NaN;
  private same = 0;

  /** `ms`, or a few milliseconds after it: the time to give the next message logged at `ms`. */
  next(ms: number): number {
    this.same = ms === this.previous ? Math.min(this.same + 1, MAX_SAME) : 0;
    this.previous = ms;
    return ms + this.same;
  }
}

/** Counts exact repeats: the ordinal of each content key in the order they are met. */
export class Repeats {
  private readonly seen = new Map<string, number>();

  next(parts: readonly (string | number)[]): number {
    const key = JSON.stringify(parts);
    const ordinal = this.seen.get(key) ?? 0;
    this.seen.set(key, ordinal + 1);
    return ordinal;
  }

  /** Forgets every key: repeats are exact, so a reader in time order clears at each new time. */
  clear(): void {
    this.seen.clear();
  }
}
