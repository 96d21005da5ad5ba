import { LambdaClient } from "@aws-sdk/client-lambda";
import type { Context } from "aws-lambda";
import {
  type DispatchSummary,
  deadlineBudget,
  dispatchTick,
  LambdaWorkerInvoker,
  runTick,
  type TickSummary,
} from "convoseg/pipeline";
import { config, deps, metrics } from "./setup.js";

// readSegmentConfig requires WORKER_FUNCTION when there is more than one worker.
const invoker =
  config.workers > 1
    ? new LambdaWorkerInvoker({
        client: new LambdaClient({}),
        functionName: config.workerFunction as string,
      })
    : null;

/**
 * The scheduled tick (EventBridge). With one worker (the default) it does the tick itself and
 * takes no new channel once less than the budget margin is left of the invocation, so that the
 * rest waits for the next tick instead of a timeout. With more, it is the dispatcher: it starts
 * a worker per share of the due index (`worker.ts`) and returns.
 *
 * @public The Lambda runtime calls it: infra names this file as the function's entry.
 */
export async function handler(
  _event: unknown,
  context: Context,
): Promise<TickSummary | DispatchSummary> {
  try {
    if (invoker !== null) return await dispatchTick(invoker, config.workers, deps);
    const deadline = Date.now() + context.getRemainingTimeInMillis() - config.budgetMarginMs;
    return await runTick(deps, deadlineBudget(deadline));
  } finally {
    metrics.publishStoredMetrics();
  }
}
