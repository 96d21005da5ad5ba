import { LambdaClient } from "@aws-sdk/client-lambda";
import type { Context } from "aws-lambda";
import {
  type DispatchSummary,
  dispatchTick,
  LambdaWorkerInvoker,
  runTick,
  type TickSummary,
} from "../../lib/pipeline/index.js";
import { config, deps, metrics } from "./setup.js";

const invoker =
  config.workerFunction === null
    ? null
    : new LambdaWorkerInvoker({
        client: new LambdaClient({}),
        functionName: config.workerFunction,
      });

/**
 * The scheduled tick (EventBridge). With one worker (the default) it does the tick itself and
 * takes no new channel once less than the budget margin is left of the invocation, so that the
 * rest waits for the next tick instead of a timeout. With more, it is the dispatcher: it starts
 * a worker per share of the due index (`worker.ts`) and returns.
 */
export async function handler(
  _event: unknown,
  context: Context,
): Promise<TickSummary | DispatchSummary> {
  const deadline = Date.now() + context.getRemainingTimeInMillis() - config.budgetMarginMs;
  try {
    if (invoker !== null && config.workers > 1) {
      return await dispatchTick(invoker, config.workers, deps);
    }
    return await runTick(deps, () => Date.now() >= deadline);
  } finally {
    metrics.publishStoredMetrics();
  }
}
