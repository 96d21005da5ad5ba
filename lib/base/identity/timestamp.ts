/**
 * The timestamps convoseg accepts: from the epoch (1970-01-01T00:00:00Z; zero and negative values
 * are missing or broken timestamps, not chat) to the last millisecond of year 9999 (the last one
 * ISO-8601 writes with four digits). Within it, every due-time sum of the pipeline is exact.
 */
const MIN_TIMESTAMP_MS = 0;
export const MAX_TIMESTAMP_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Whether `ms` is an accepted timestamp, {@link MIN_TIMESTAMP_MS} to {@link MAX_TIMESTAMP_MS}. */
export function isAcceptedTimestamp(ms: number): boolean {
  return ms >= MIN_TIMESTAMP_MS && ms <= MAX_TIMESTAMP_MS;
}

/**
 * How far past its own clock convoseg takes a message's time: clock skew between a platform and
 * this machine, and zones mistaken by an hour or a day, but not a message dated 2286 or 5138 (a
 * broken clock, an export's garbage, or a sender's lie), which would sort after everything real
 * and never settle.
 */
const MAX_FUTURE_MS = 86_400_000;

/** Why a message at `ms` is refused at wall clock `now` (more than a day ahead), or undefined. */
export function futureTimestampProblem(ms: number, now: number): string | undefined {
  if (ms <= now + MAX_FUTURE_MS) return undefined;
  return `${new Date(ms).toISOString()} is more than a day after this machine's clock (${new Date(now).toISOString()}): a wrong clock or a broken export, not chat`;
}

/**
 * The largest epoch-millisecond magnitude a `Date` can carry: the bound of a stored message's
 * `ts`. A history store also keeps conversations with a chat model, so it asks only this much;
 * chat enters through {@link isAcceptedTimestamp}.
 */
export const MAX_DATE_MS = 8.64e15;
