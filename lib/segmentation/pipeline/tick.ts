import { randomUUID } from "node:crypto";
import { type TickBudget, UNLIMITED_BUDGET } from "./budget.js";
import { processChannel } from "./channel-step.js";
import type { DueChannel } from "./store/channel-state.js";
import type { TickDependencies } from "./tick-dependencies.js";
import type { TickShare } from "./types.js";

export interface TickSummary {
  tickId: string;
  channels: number;
  segments: number;
  late: number;
  dropped: number;
  errors: number;
  stoppedEarly: boolean;
}

/** A summary of no work yet, to add a tick's (or its workers') channels to. */
export function emptyTickSummary(tickId: string): TickSummary {
  return {
    tickId,
    channels: 0,
    segments: 0,
    late: 0,
    dropped: 0,
    errors: 0,
    stoppedEarly: false,
  };
}

/**
 * One scheduled tick: every channel on the due index (due at or before `now`, longest waiting
 * first) is processed, a few at a time, until the list ends or the `budget` (the invocation's
 * time) starts no more. A channel that fails is logged with its id, counted and left due: the
 * next tick retries it, and the others go on. With a `share`, only the channels of that share's
 * shards: one worker's part of a fanned-out tick (`runShare`).
 */
export async function runTick(
  deps: TickDependencies,
  budget: TickBudget = UNLIMITED_BUDGET,
  share?: TickShare,
): Promise<TickSummary> {
  const started = deps.wallNow();
  const summary = emptyTickSummary(randomUUID());
  if (budget.spent()) summary.stoppedEarly = true;
  else await takeDueChannels(deps, budget, summary, share);
  deps.metrics.add("TickDurationMs", deps.wallNow() - started);
  if (summary.stoppedEarly) deps.metrics.add("TicksStoppedEarly", 1);
  deps.logger.info("tick finished", { ...summary, ...(share && { share }) });
  return summary;
}

/** Processes due channels, `channelConcurrency` at a time, while the budget starts them. */
async function takeDueChannels(
  deps: TickDependencies,
  budget: TickBudget,
  summary: TickSummary,
  share: TickShare | undefined,
): Promise<void> {
  const due = deps.channels.dueChannels(deps.now(), share)[Symbol.asyncIterator]();
  // The longest-waiting channel comes first: how long it has waited is the backlog an operator
  // alarms on.
  let first: IteratorResult<DueChannel> | undefined = await due.next();
  deps.metrics.add("OldestDueAgeMs", first.done ? 0 : Math.max(0, deps.now() - first.value.dueAt));
  const taken = new Set<string>();
  const worker = async () => {
    for (;;) {
      const next = first ?? (await due.next());
      first = undefined;
      if (next.done) return;
      if (taken.has(next.value.channel)) continue;
      if (!budget.startChannel()) {
        summary.stoppedEarly = true;
        return;
      }
      taken.add(next.value.channel);
      await processDueChannel(deps, next.value.channel, summary);
    }
  };
  await Promise.all(Array.from({ length: deps.settings.channelConcurrency }, worker));
}

async function processDueChannel(deps: TickDependencies, channel: string, summary: TickSummary) {
  try {
    const report = await processChannel(deps, channel);
    summary.channels++;
    summary.segments += report.delivered.length;
    summary.late += report.late;
    summary.dropped += report.dropped.length;
  } catch (error) {
    summary.errors++;
    deps.metrics.add("ChannelErrors", 1);
    deps.logger.error("channel failed; it stays due and is retried next tick", {
      tickId: summary.tickId,
      channel,
      error: (error as Error).message,
      errorName: (error as Error).name,
    });
  }
}
