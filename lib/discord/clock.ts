/** Time as the poller sees it: injectable, so tests and the benchmark can simulate waits. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
};

/**
 * A clock whose waits take no real time: `now` is real elapsed time plus every wait so far, so
 * work done still counts and only the sleeping is skipped (the benchmark's simulated tick).
 */
export function simulatedClock(start = Date.now()): Clock & { slept(): number } {
  const realStart = performance.now();
  let slept = 0;
  return {
    now: () => start + (performance.now() - realStart) + slept,
    sleep: async (ms) => {
      if (ms > 0) slept += ms;
    },
    slept: () => slept,
  };
}
