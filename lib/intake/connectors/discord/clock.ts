/** Time as the poller sees it: injectable, so tests and the benchmark can simulate waits. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
  /** Work in progress (a request): a simulated clock skips no time until it is settled. */
  track?<T>(work: Promise<T>): Promise<T>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
};

/**
 * A clock whose waits take no real time: `now` is real elapsed time plus the time skipped. Once
 * the process has had a millisecond for other work and no tracked request is in flight, the
 * earliest waiter's wake-up time is skipped to and it wakes; waits that overlap (channels in flight) therefore overlap here too, and work
 * done (requests, ingestion) still counts in real time. The benchmark's simulated tick.
 */
export function simulatedClock(start = Date.now()): Clock & { slept(): number } {
  const realStart = performance.now();
  let slept = 0;
  const now = () => start + (performance.now() - realStart) + slept;
  const waiting: { at: number; wake: () => void }[] = [];
  let scheduled = false;
  let inFlight = 0;
  const advance = () => {
    scheduled = false;
    if (waiting.length === 0) return;
    waiting.sort((a, b) => a.at - b.at);
    // Time skipped while a request is on its way would reach the server as elapsed: then the
    // waiters wake as real time reaches them.
    const gap = waiting[0].at - now();
    if (gap > 0 && inFlight === 0) slept += gap;
    const at = now();
    while (waiting.length > 0 && waiting[0].at <= at) waiting.shift()?.wake();
    schedule();
  };
  const schedule = () => {
    if (!scheduled && waiting.length > 0) {
      scheduled = true;
      setTimeout(advance, 1);
    }
  };
  return {
    now,
    sleep: (ms) =>
      ms <= 0
        ? Promise.resolve()
        : new Promise<void>((wake) => {
            waiting.push({ at: now() + ms, wake });
            schedule();
          }),
    track: async (work) => {
      inFlight += 1;
      try {
        return await work;
      } finally {
        inFlight -= 1;
        schedule();
      }
    },
    slept: () => slept,
  };
}
