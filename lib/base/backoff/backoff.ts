/** Retry pacing shared by every AWS caller of convoseg. */
export interface Backoff {
  baseDelayMs: number;
  maxDelayMs: number;
  random: () => number;
  sleep: (ms: number) => Promise<void>;
}

export const realSleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits before retry number `attempt` (1 for the first retry): a uniform time up to
 * `baseDelayMs * 2^(attempt-1)`, capped at `maxDelayMs`. Full jitter, so that callers that failed
 * together do not retry in step.
 */
export function backoff(pacing: Backoff, attempt: number): Promise<void> {
  const ceiling = Math.min(pacing.maxDelayMs, pacing.baseDelayMs * 2 ** (attempt - 1));
  return pacing.sleep(pacing.random() * ceiling);
}
