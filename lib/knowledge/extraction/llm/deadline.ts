/**
 * The total deadline of one model call, which both adapters hold to: a per-request timeout ends
 * at the reply's headers (OpenAI's SDK) or restarts with every retry (both), so a reply that
 * trickles, or an endpoint that never answers, would otherwise hold the call for minutes.
 */
import { positiveInteger } from "./options.js";

/** setTimeout's longest delay; a longer one fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** `value`, unless it is not a positive integer a timer can wait (for the option `name`). */
export function timerMs(name: string, value: number): number {
  positiveInteger(name, value);
  if (value > MAX_TIMER_MS)
    throw new RangeError(`${name} must be at most ${MAX_TIMER_MS} (got ${value})`);
  return value;
}

/** What a call that ran past `deadlineMs` failed of, for its error's message. */
export function deadlinePassed(deadlineMs: number): string {
  return `no complete reply within deadlineMs ${deadlineMs} (the whole call, its retries and the reading of the reply included; the endpoint is stalled or too slow)`;
}

/**
 * A signal that aborts at `ms` or with `signal`, whichever comes first (with the caller's reason
 * then), and whether the deadline is what aborted it.
 */
export function callDeadline(
  ms: number,
  signal: AbortSignal | undefined,
): { signal: AbortSignal; passed: () => boolean; dispose: () => void } {
  const controller = new AbortController();
  let passed = false;
  const timer = setTimeout(() => {
    passed = true;
    controller.abort(new Error(`deadlineMs ${ms} passed`));
  }, ms);
  const abort = () => controller.abort(signal?.reason);
  if (signal?.aborted) abort();
  signal?.addEventListener("abort", abort, { once: true });
  return {
    signal: controller.signal,
    passed: () => passed,
    dispose: () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", abort);
    },
  };
}

/**
 * `promise`, or the signal's reason as soon as it aborts: neither SDK is trusted to give up at
 * once (OpenAI's sleeps through an abort while it waits to retry).
 */
export function rejectOnAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) abort();
    signal.addEventListener("abort", abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}
