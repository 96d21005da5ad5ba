/**
 * The naive tick that the pipeline benchmark (`bench/pipeline.ts`) measures the real one against:
 * the channel state keeps no open tail, only the arrival position where it starts, so every time
 * a channel is due the tick re-reads everything that arrived from there on (the whole open tail
 * plus the new arrivals), plans it from scratch and delivers what is closed. Everything else is
 * the real tick's: the channels table with its due index and version lock, the planner, segment
 * bodies and SQS delivery, so what the benchmark compares is the handling of the tail.
 *
 * It is correct only for what the benchmark feeds it: in-order ingestion (arrival order is channel
 * order, so nothing after the tail's start was emitted), one tick and one writer at a time, no
 * crashes. It has no lease check, outbox recovery, hold handling or cap on arrivals per channel.
 */
import { randomUUID } from "node:crypto";
import type { Arrival } from "convoseg/history/dynamodb";
import type { MessageRef } from "convoseg/identity";
import { deliverSegments, plan, type TickDependencies } from "convoseg/pipeline";
import { encodeTickState, type TickState } from "convoseg/pipeline/store";

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
      summary.segments += await processChannel(deps, next.value.channel);
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
  const snapshot = await deps.channels.load(channel);
  const { state } = snapshot.record;
  const horizon = snapshot.marks.seq ?? 0n;
  const arrivals: Arrival[] = [];
  for await (const arrival of deps.messages.arrivalsAfter(channel, state.readUpTo ?? undefined, {
    upTo: horizon,
  })) {
    arrivals.push(arrival);
  }
  const refs: MessageRef[] = arrivals.flatMap(({ id, ts }) =>
    id === undefined || ts === undefined ? [] : [{ id, ts }],
  );
  const result = plan(channel, { ...state.planner, tail: [] }, refs, deps.now(), settings);
  const open = new Set(result.state.tail.map((m) => m.id));
  const tailStart = arrivals.find(({ id }) => open.has(id ?? ""))?.position;
  const next: TickState = {
    planner: { ...result.state, tail: [] },
    readUpTo: tailStart === undefined ? horizon : tailStart - 1n,
    seqSeen: null,
    outbox: { segments: result.segments, dropped: result.dropped, late: result.late.length },
    holdsSeen: {},
    broken: [],
  };
  const recorded = await deps.channels.record(snapshot, {
    state: next,
    encoded: encodeTickState(next),
    leaseUntil: deps.wallNow() + settings.leaseMs,
    recordId: randomUUID(),
  });
  if (recorded !== "recorded")
    throw new Error(`naive tick: channel ${channel} was recorded by another tick`);
  await deliverSegments(
    result.segments,
    (ids) => deps.messages.getMessages(channel, ids),
    (entries) => deps.sink.send(entries),
    deps.bodies,
  );
  await deps.channels.finish(snapshot, snapshot.record.version + 1, result.nextDueAt, deps.now());
  return result.segments.length;
}
