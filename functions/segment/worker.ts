import type { Context } from "aws-lambda";
import { deadlineBudget, parseWorkerEvent, runShare, type ShareRun } from "convoseg/pipeline";
import { config, deps, metrics } from "./setup.js";

/**
 * One worker of a fanned-out tick, started by the dispatcher (`handler.ts`) with
 * `{ "share": { "index": i, "of": n } }`: the tick over that share of the due index. It claims
 * the share for the rest of its invocation and, like the single tick, takes no new channel once
 * less than the budget margin is left.
 *
 * @public The Lambda runtime calls it: infra names this file as the function's entry.
 */
export async function handler(event: unknown, context: Context): Promise<ShareRun> {
  const share = parseWorkerEvent(event);
  const end = Date.now() + context.getRemainingTimeInMillis();
  const deadline = end - config.budgetMarginMs;
  try {
    return await runShare(deps, share, { until: end, budget: deadlineBudget(deadline) });
  } finally {
    metrics.publishStoredMetrics();
  }
}
