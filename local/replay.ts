import { compareRefs } from "convoseg/identity";
import type { ChatMessage } from "convoseg/messages";
import type { SegmentMessageV1 } from "convoseg/pipeline/contract";
import type { LocalPipeline } from "./pipeline.js";

export interface ReplayOptions {
  /** Simulated time between scheduled ticks, ms. */
  tickMs: number;
  /** Called before each tick (tests arm crash injection here) and after it. */
  beforeTick?: (now: number) => void;
  afterTick?: (now: number) => void;
  /** Run two ticks at once each time, as overlapping EventBridge deliveries would. */
  overlap?: boolean;
  /** Messages ingested once the clock has passed the last regular message: back-dated arrivals. */
  late?: ChatMessage[];
  /**
   * After each tick, hand the delivered segments to the pipeline's extraction (it must have
   * one) instead of only draining the queue.
   */
  extract?: boolean;
  onProgress?: (progress: ReplayProgress) => void;
  /**
   * Where an earlier replay on the same tables left the clock: this one goes on from there, never
   * back (messages older than it arrive at it, late, as they would on a deployment).
   */
  start?: number;
}

interface ReplayProgress {
  now: number;
  ingested: number;
  total: number;
  delivered: number;
}

/** A message that ingestion refused (invalid) or could not confirm (failed). */
export interface RefusedMessage {
  message: ChatMessage;
  field: string;
  problem: string;
}

/** A message whose id was stored already with other content: the stored one is kept. */
export interface ConflictingMessage {
  message: ChatMessage;
  fields: string[];
}

export interface ReplayResult {
  delivered: SegmentMessageV1[];
  /** What ingestion did not store, in ingestion order. */
  refused: RefusedMessage[];
  /** What was not stored because its id holds another message (an earlier run's, say). */
  conflicts: ConflictingMessage[];
  /** Messages stored already exactly as sent (a file run twice). */
  unchanged: number;
  ticks: number;
  /** Ticks that failed as a whole (their invocation died); the next tick carries on. */
  failedTicks: number;
  /** When the replay ended: everything ingested has settled. */
  end: number;
}

/**
 * Replays chat through the pipeline on a simulated clock: messages are ingested in channel order
 * (timestamp, then id) when the clock reaches them, a tick runs every `tickMs` of simulated time,
 * and after the last message the clock runs on until every conversation has settled. Ticks at
 * which nothing can happen (no arrival, no channel due) are skipped: they would find nothing to
 * do. The queue is drained (or extracted, with `extract`) after each tick; the delivered segments
 * come back in delivery order.
 */
export async function replay(
  pipeline: LocalPipeline,
  messages: readonly ChatMessage[],
  options: ReplayOptions,
): Promise<ReplayResult> {
  const sorted = [...messages].sort(compareRefs);
  const { settings } = pipeline.config;
  const start = Math.max(sorted[0]?.ts ?? 0, options.start ?? 0);
  const last = Math.max(sorted.at(-1)?.ts ?? 0, options.start ?? 0);
  const end = last + settings.settle + settings.grace + 2 * options.tickMs;
  const result: ReplayResult = {
    delivered: [],
    refused: [],
    conflicts: [],
    unchanged: 0,
    ticks: 0,
    failedTicks: 0,
    end,
  };
  const ingestAt = async (batch: ChatMessage[], now: number) => {
    const outcome = await pipeline.ingest(batch, now);
    for (const { index, field, problem } of outcome.rejected) {
      result.refused.push({ message: batch[index], field, problem });
    }
    for (const { index, error } of outcome.failed) {
      result.refused.push({ message: batch[index], field: "store", problem: error });
    }
    for (const { index, fields } of outcome.conflicts) {
      result.conflicts.push({ message: batch[index], fields });
    }
    result.unchanged += outcome.unchanged.length;
  };
  let next = 0;
  let lateSent = false;
  for (let now = sorted.length === 0 && options.start === undefined ? end : start; now <= end; ) {
    const batch: ChatMessage[] = [];
    while (next < sorted.length && sorted[next].ts <= now) batch.push(sorted[next++]);
    if (batch.length > 0) await ingestAt(batch, now);
    if (options.late && !lateSent && now > last) {
      await ingestAt(options.late, now);
      lateSent = true;
    }
    options.beforeTick?.(now);
    const ticks = options.overlap ? [pipeline.tick(now), pipeline.tick(now)] : [pipeline.tick(now)];
    for (const outcome of await Promise.allSettled(ticks)) {
      if (outcome.status === "rejected") result.failedTicks++;
    }
    options.afterTick?.(now);
    result.ticks++;
    result.delivered.push(...(await (options.extract ? pipeline.extract() : pipeline.drain())));
    options.onProgress?.({
      now,
      ingested: next,
      total: sorted.length,
      delivered: result.delivered.length,
    });
    now = await nextTick(pipeline, now, options, sorted[next]?.ts, lateSent ? end : last + 1, end);
  }
  return result;
}

/** The next tick on the grid at which a message arrives or a channel is due. */
async function nextTick(
  pipeline: LocalPipeline,
  now: number,
  options: ReplayOptions,
  nextMessage: number | undefined,
  nextLate: number,
  end: number,
): Promise<number> {
  const due = await pipeline.channels.earliestDue();
  const target = Math.min(nextMessage ?? end, due ?? end, options.late ? nextLate : end, end);
  return now + Math.max(1, Math.ceil((target - now) / options.tickMs)) * options.tickMs;
}
