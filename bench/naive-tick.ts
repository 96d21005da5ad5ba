/**
 * The naive tick that the pipeline benchmark (`bench/pipeline.ts`) measures the real one against:
 * the channel state keeps no open tail, only the arrival position where it starts, so every time
 * a channel is due the tick re-reads every message that arrived from there on (the whole open
 * tail plus the new arrivals), plans them from scratch and delivers what is closed. Everything
 * else is the real tick's: the channels table with its due index and version lock, the planner,
 * segment bodies and SQS delivery, so what the benchmark compares is the handling of the tail.
 *
 * It is correct only for what the benchmark feeds it: in-order ingestion (arrival order is channel
 * order, so nothing after the tail's start was emitted), one tick at a time, no crashes. It has no
 * lease check, outbox recovery, late-message handling or cap on arrivals per channel.
 */
import type { PositionedMessage } from "../lib/history/dynamodb/store.js";
import { plan } from "../lib/pipeline/planner.js";
import type { TickDependencies } from "../lib/pipeline/tick.js";
import type { MessageRef, PlannedSegment } from "../lib/pipeline/types.js";

export interface NaiveTickSummary {
  channels: number;
  segments: number;
}

/**
 * Processes every due channel, `channelConcurrency` at a time, as `runTick` does. Errors
 * propagate instead of leaving the channel for the next tick: a benchmark must not hide them.
 */
export async function runNaiveTick(deps: TickDependencies): Promise<NaiveTickSummary> {
  const summary: NaiveTickSummary = { channels: 0, segments: 0 };
  const due = deps.channels.dueChannels(deps.now())[Symbol.asyncIterator]();
  const worker = async () => {
    for (let next = await due.next(); !next.done; next = await due.next()) {
      summary.segments += await processChannel(deps, next.value);
      summary.channels++;
    }
  };
  await Promise.all(Array.from({ length: deps.settings.channelConcurrency }, worker));
  return summary;
}

/**
 * Re-reads the channel from the start of its open tail, plans that from an empty tail, records
 * where the still-open messages start (instead of the messages themselves), delivers, and sets
 * when the channel is next due. Returns the number of segments delivered.
 */
async function processChannel(deps: TickDependencies, channel: string): Promise<number> {
  const { settings } = deps;
  const wall = deps.wallNow();
  const record = await deps.channels.get(channel);
  const horizon = BigInt(wall - settings.readLagMs) * 1_000_000n;
  const arrivals: PositionedMessage[] = [];
  for await (const arrival of deps.messages.readAfter(channel, record.readUpTo ?? undefined, {
    upTo: horizon,
  })) {
    arrivals.push(arrival);
  }
  const refs: MessageRef[] = arrivals.flatMap(({ message: { id, ts } }) =>
    id === undefined || ts === undefined ? [] : [{ id, ts }],
  );
  const result = plan(channel, { ...record.planner, tail: [] }, refs, deps.now(), settings);
  const open = new Set(result.state.tail.map((m) => m.id));
  const tailStart = arrivals.find(({ message }) => open.has(message.id ?? ""))?.position;
  const recorded = await deps.channels.record(record, {
    planner: { ...result.state, tail: [] },
    readUpTo: tailStart === undefined ? horizon : tailStart - 1n,
    outbox: { segments: result.segments, dropped: result.dropped, late: result.late.length },
    leaseUntil: wall + settings.leaseMs,
  });
  if (!recorded) throw new Error(`naive tick: channel ${channel} was recorded by another tick`);
  await deliver(deps, result.segments, arrivals);
  await deps.channels.finish({ ...record, version: record.version + 1 }, result.nextDueAt);
  return result.segments.length;
}

/** Sends the segments; their messages are all in hand, having just been re-read. */
async function deliver(
  deps: TickDependencies,
  segments: PlannedSegment[],
  arrivals: PositionedMessage[],
): Promise<void> {
  if (segments.length === 0) return;
  const byId = new Map(arrivals.map(({ message }) => [message.id, message]));
  const entries = segments.map((segment) => {
    const messages = segment.messages.map((ref) => {
      const message = byId.get(ref.id);
      if (message === undefined) throw new Error(`naive tick: message ${ref.id} was not read`);
      return message;
    });
    return { segment, body: deps.body(segment, messages) };
  });
  await deps.sink.send(entries);
}
