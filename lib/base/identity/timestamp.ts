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
 * The largest epoch-millisecond magnitude a `Date` can carry: the bound of a stored message's
 * `ts`. A history store also keeps conversations with a chat model, so it asks only this much;
 * chat enters through {@link isAcceptedTimestamp}.
 */
export const MAX_DATE_MS = 8.64e15;
