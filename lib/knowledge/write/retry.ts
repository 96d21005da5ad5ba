/**
 * When a failed segment is tried again, and when the consumer gives up on it. SQS counts every
 * receive (a budget pause, a record skipped behind its FIFO group's failure, a busy segment), so
 * the consumer keeps its own count of real attempts (in the segment's lease item) and decides by
 * that; the queue's `maxReceiveCount` is only a last resort.
 */

import {
  BudgetPausedError,
  CircuitOpenError,
  DeadlineError,
  LeaseLostError,
  SegmentBusyError,
} from "../errors.js";
import { LLMError } from "../extraction/index.js";

export interface RetrySchedule {
  /** The delay after the first failed attempt, doubled per attempt. */
  baseDelaySeconds: number;
  /** The longest delay: also how long a record waits out a budget pause or a 401/403. */
  maxDelaySeconds: number;
  /** Failed attempts after which the consumer dead-letters the segment. */
  maxAttempts: number;
}

/**
 * 30 s doubling to an hour, 16 attempts: the last attempt comes about 9 hours after the first
 * failure ({@link rideOutSeconds}), so a provider outage of 6 hours loses nothing.
 */
export const DEFAULT_RETRY: Readonly<RetrySchedule> = Object.freeze({
  baseDelaySeconds: 30,
  maxDelaySeconds: 3600,
  maxAttempts: 16,
});

/**
 * Failed attempts after which a segment whose last reply was still invalid after its repair
 * request is given up (each attempt is two calls): models sample, so another attempt usually
 * parses, but a prompt the model cannot answer should not spend `maxAttempts` attempts' tokens.
 */
export const INVALID_OUTPUT_ATTEMPTS = 4;

/** SQS's longest visibility timeout (12 hours). */
export const MAX_VISIBILITY_SECONDS = 43_200;

/**
 * Whether a failure is a wait rather than an attempt: the segment was not tried (busy with
 * another delivery, its lease taken over, the budget spent, the breaker open, no time left), so
 * it does not use up the segment's attempts.
 */
export function isWait(error: unknown): boolean {
  return (
    error instanceof SegmentBusyError ||
    error instanceof LeaseLostError ||
    error instanceof BudgetPausedError ||
    error instanceof CircuitOpenError ||
    error instanceof DeadlineError
  );
}

/** The provider refused the credentials (401) or the access (403): no retry will fix it soon. */
export function isAuthFailure(error: unknown): boolean {
  return error instanceof LLMError && (error.status === 401 || error.status === 403);
}

/**
 * Seconds before a record is tried again after `error` on its `attempts`-th failed attempt:
 * `baseDelaySeconds` doubling per attempt up to `maxDelaySeconds`; a wait lasts until what it
 * waits for ends (another delivery's lease, the breaker's cool-down, the budget's day, at most
 * `maxDelaySeconds`); a refused key or access waits the longest delay (never a retry loop).
 */
export function retryDelaySeconds(
  error: unknown,
  attempts: number,
  now: number,
  schedule: RetrySchedule = DEFAULT_RETRY,
): number {
  const { baseDelaySeconds: base, maxDelaySeconds: max } = schedule;
  const until = (at: number) => Math.min(max, Math.max(1, Math.ceil((at - now) / 1000)));
  if (error instanceof SegmentBusyError) return until(error.leaseExpiresAt);
  if (error instanceof BudgetPausedError) return until(error.resumesAt);
  if (error instanceof CircuitOpenError) return until(error.closesAt);
  if (error instanceof DeadlineError || error instanceof LeaseLostError) return base;
  if (isAuthFailure(error)) return max;
  return Math.min(max, base * 2 ** Math.max(0, attempts - 1));
}

/**
 * How long after the first failure the consumer still tries: the delays between its attempts.
 * A provider outage shorter than this loses no segment.
 */
export function rideOutSeconds(schedule: RetrySchedule = DEFAULT_RETRY): number {
  let total = 0;
  for (let n = 1; n < schedule.maxAttempts; n++) {
    total += Math.min(schedule.maxDelaySeconds, schedule.baseDelaySeconds * 2 ** (n - 1));
  }
  return total;
}
