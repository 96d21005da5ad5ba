/**
 * Expiry times for DynamoDB's TTL: epoch seconds, reckoned from the platform time of what an item
 * holds (so that an import of old chat does not live longer than chat written today).
 */

export const DAY_MS = 86_400_000;
/** The most retention days a setting takes: a hundred years, well inside epoch seconds. */
export const MAX_RETENTION_DAYS = 36_500;

/** Throws unless `days` is a retention a deployment may set (1 to {@link MAX_RETENTION_DAYS}). */
export function checkRetentionDays(days: number, name: string): number {
  if (!Number.isSafeInteger(days) || days < 1 || days > MAX_RETENTION_DAYS) {
    throw new RangeError(
      `${name} must be a whole number of days from 1 to ${MAX_RETENTION_DAYS} (got ${days})`,
    );
  }
  return days;
}

/**
 * The TTL value of an item kept `retentionMs` after `fromMs`: never before `nowMs`, the write,
 * because DynamoDB's TTL ignores an expiry more than five years past and would keep the item
 * forever; one already past is removed by the next sweep.
 */
export function expirySeconds(fromMs: number, retentionMs: number, nowMs: number): number {
  return Math.floor(Math.max(fromMs + retentionMs, nowMs) / 1000);
}
