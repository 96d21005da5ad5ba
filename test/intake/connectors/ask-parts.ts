/** What the ask and mark endpoints' tests give a receiver: a rate limit, counts, a log, a clock. */
import { AskRateLimit } from "convoseg/connectors";

export const NOW = 1_750_000_000_000;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

/** The receiver's shared options, with what it counted and logged (info lines). */
export function receiverParts(limit = new AskRateLimit({}, () => NOW)) {
  const counts: Record<string, number> = {};
  const logged: unknown[] = [];
  return {
    counts,
    logged,
    options: {
      limit,
      metrics: {
        add: (name: string, n: number) => {
          counts[name] = (counts[name] ?? 0) + n;
        },
      },
      log: { ...quiet, info: (m: string, a: unknown) => void logged.push([m, a]) },
      now: () => NOW,
    },
  };
}
