/**
 * The fanned-out tick, for more due channels than one invocation gets through. The scheduled
 * function becomes a dispatcher that starts `workers` workers at once, each with a share of the
 * due index (`shareShards`: shard `j` belongs to share `j mod workers`); every worker runs the
 * ordinary tick over its share's shards. Nothing is enqueued per channel: the due index is the
 * work queue, so a channel is in exactly one share and a worker takes it at most once per run.
 *
 * A share is claimed for the worker's whole invocation, so a worker started while the previous
 * tick's worker of the same share still runs finds it busy and ends at once (`SharesBusy`):
 * a channel is never handed out faster than its share is worked, and a backlog shows as due
 * channels growing older (`OldestDueAgeMs`). A worker that dies keeps its claim until its
 * invocation would have timed out; its channels wait that long. The channel's version fence
 * and lease stay what keeps two runs (say, workers of the old and new count mid-deploy) from
 * delivering a channel twice; the claim only keeps them from wasting work on one share.
 */
import { randomUUID } from "node:crypto";
import type { TickBudget } from "./budget.js";
import { DispatchError, WorkerEventError } from "./errors.js";
import { MAX_DUE_SHARDS } from "./schema/due-shards.js";
import { runTick, type TickSummary } from "./tick.js";
import type { PipelineLogger, PipelineMetrics, TickDependencies } from "./tick-dependencies.js";
import type { TickShare } from "./types.js";

/** Each worker owns at least one shard of the due index. */
export const MAX_WORKERS = MAX_DUE_SHARDS;

/** The shares of a tick fanned out to `workers` workers: `0/workers` … `workers-1/workers`. */
export function tickShares(workers: number): TickShare[] {
  return Array.from({ length: workers }, (_, index) => ({ index, of: workers }));
}

/** Starts one worker on a share (an asynchronous Lambda invocation in production). */
export interface WorkerInvoker {
  invoke(share: TickShare): Promise<void>;
}

export interface DispatchSummary {
  workers: number;
  invoked: number;
}

/**
 * The dispatcher: starts a worker for every share. A share whose worker could not be started
 * (after the invoker's own retries) is logged and counted, the others still start, and then a
 * {@link DispatchError} names the missing shares; their channels stay due for the next tick.
 */
export async function dispatchTick(
  invoker: WorkerInvoker,
  workers: number,
  observe: { metrics: PipelineMetrics; logger: PipelineLogger },
): Promise<DispatchSummary> {
  const shares = tickShares(workers);
  const results = await Promise.allSettled(shares.map((share) => invoker.invoke(share)));
  const failed = shares.filter((_, i) => results[i].status === "rejected");
  observe.metrics.add("WorkersInvoked", workers - failed.length);
  for (const [i, result] of results.entries()) {
    if (result.status === "fulfilled") continue;
    const error = result.reason as Error;
    observe.logger.error("worker not started; its share's channels stay due", {
      share: shares[i],
      error: error.message,
      errorName: error.name,
    });
  }
  if (failed.length > 0) {
    observe.metrics.add("WorkerInvokeErrors", failed.length);
    const first = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    throw new DispatchError(failed, { cause: first.reason });
  }
  observe.logger.info("tick dispatched", { workers });
  return { workers, invoked: workers };
}

export interface ShareRun {
  share: TickShare;
  /** The share was still claimed by another worker: this one did nothing. */
  busy: boolean;
  tick: TickSummary | null;
}

/**
 * One worker: claims its share until `until` (wall ms, when its invocation ends), runs the tick
 * over the share's shards within `budget`, and releases the claim. A share claimed by a worker
 * still running is left to it.
 */
export async function runShare(
  deps: TickDependencies,
  share: TickShare,
  options: { until: number; budget?: TickBudget },
): Promise<ShareRun> {
  const owner = randomUUID();
  if (!(await deps.channels.claimShare(share, owner, options.until, deps.wallNow()))) {
    deps.metrics.add("SharesBusy", 1);
    deps.logger.warn("share still worked by an earlier worker; its channels wait for it", {
      share,
    });
    return { share, busy: true, tick: null };
  }
  try {
    return { share, busy: false, tick: await runTick(deps, options.budget, share) };
  } finally {
    await deps.channels.releaseShare(share, owner);
  }
}

/** The worker's event, `{ "share": { "index": i, "of": n } }` as the dispatcher sends it. */
export function parseWorkerEvent(event: unknown): TickShare {
  const share = (event as { share?: unknown } | null)?.share;
  if (typeof share !== "object" || share === null) {
    throw new WorkerEventError("share", "must be an object { index, of }");
  }
  const { index, of } = share as { index?: unknown; of?: unknown };
  if (!Number.isSafeInteger(of) || (of as number) < 1 || (of as number) > MAX_WORKERS) {
    throw new WorkerEventError(
      "share.of",
      `must be an integer from 1 to ${MAX_WORKERS} (got ${JSON.stringify(of)})`,
    );
  }
  if (
    !Number.isSafeInteger(index) ||
    (index as number) < 0 ||
    (index as number) >= (of as number)
  ) {
    throw new WorkerEventError(
      "share.index",
      `must be an integer from 0 to ${(of as number) - 1} (got ${JSON.stringify(index)})`,
    );
  }
  return { index: index as number, of: of as number };
}
