import { randomUUID } from "node:crypto";
import type { PositionedMessage } from "../history/dynamodb/store.js";
import type { Message } from "../history/message.js";
import type { ChannelRecord, ChannelStore, Outbox } from "./channel-store.js";
import { plan } from "./planner.js";
import type { MessageRef, PipelineConfig, PlannedSegment } from "./types.js";

/** Where the tick reads messages: the history store's DynamoDB backend satisfies it. */
export interface MessageSource {
  readAfter(
    channel: string,
    after: bigint | undefined,
    options?: { upTo?: bigint },
  ): AsyncIterable<PositionedMessage>;
  getMessages(channel: string, ids: readonly string[]): Promise<Message[]>;
}

/** Where closed segments go (SQS in production), in order, each with its message body. */
export interface SegmentSink {
  send(entries: { segment: PlannedSegment; body: string }[]): Promise<void>;
}

export type MetricName =
  | "ChannelsProcessed"
  | "SegmentsEmitted"
  | "MessagesSegmented"
  | "LateMessages"
  | "DroppedMessages"
  | "ChannelErrors"
  | "TickDurationMs"
  | "TicksStoppedEarly"
  | "OldestDueAgeMs";

export interface PipelineMetrics {
  add(name: MetricName, value: number): void;
}

/** Structured logging; attributes carry ids and counts, never message text. */
export interface PipelineLogger {
  info(message: string, attributes: Record<string, unknown>): void;
  warn(message: string, attributes: Record<string, unknown>): void;
  error(message: string, attributes: Record<string, unknown>): void;
}

export interface TickSettings extends PipelineConfig {
  /** Arrivals younger than this (writer's wall clock) wait for the next tick: clock skew and write latency between ingestion writers. */
  readLagMs: number;
  /** Arrivals read per channel per tick; the rest waits for the next tick (bounds memory and state size). */
  maxArrivalsPerChannel: number;
  /** How long a recording tick owns its undelivered segments before another may resend them. */
  leaseMs: number;
  /** Channels processed at once within a tick. */
  channelConcurrency: number;
}

export interface TickDependencies {
  messages: MessageSource;
  channels: ChannelStore;
  sink: SegmentSink;
  body: (segment: PlannedSegment, messages: Message[]) => string;
  metrics: PipelineMetrics;
  logger: PipelineLogger;
  settings: TickSettings;
  /** The pipeline clock (epoch ms): decides what has settled. */
  now: () => number;
  /** The wall clock (epoch ms): arrival positions and leases. */
  wallNow: () => number;
}

export type ChannelOutcome = "done" | "leased" | "conflict";

export interface ChannelReport {
  outcome: ChannelOutcome;
  delivered: PlannedSegment[];
  dropped: MessageRef[];
  late: number;
}

export interface TickSummary {
  tickId: string;
  channels: number;
  segments: number;
  late: number;
  dropped: number;
  errors: number;
  stoppedEarly: boolean;
}

/**
 * One scheduled tick: every channel on the due index (due at or before `now`) is processed, a
 * few at a time, until the list ends or `shouldStop` (the time budget) says to take no more. A
 * channel that fails is logged with its id, counted and left due: the next tick retries it, and
 * the others go on.
 */
export async function runTick(
  deps: TickDependencies,
  shouldStop: () => boolean = () => false,
): Promise<TickSummary> {
  const started = deps.wallNow();
  const summary: TickSummary = {
    tickId: randomUUID(),
    channels: 0,
    segments: 0,
    late: 0,
    dropped: 0,
    errors: 0,
    stoppedEarly: false,
  };
  if (!shouldStop()) {
    // How long the longest-waiting channel has been due: the backlog an operator alarms on.
    const oldestDue = await deps.channels.earliestDue();
    deps.metrics.add(
      "OldestDueAgeMs",
      oldestDue === null ? 0 : Math.max(0, deps.now() - oldestDue),
    );
  }
  const due = deps.channels.dueChannels(deps.now())[Symbol.asyncIterator]();
  const worker = async () => {
    for (;;) {
      if (shouldStop()) {
        summary.stoppedEarly = true;
        return;
      }
      const next = await due.next();
      if (next.done) return;
      await processDueChannel(deps, next.value, summary);
    }
  };
  await Promise.all(Array.from({ length: deps.settings.channelConcurrency }, worker));
  deps.metrics.add("TickDurationMs", deps.wallNow() - started);
  if (summary.stoppedEarly) deps.metrics.add("TicksStoppedEarly", 1);
  deps.logger.info("tick finished", { ...summary });
  return summary;
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

/**
 * Processes one channel: read its state and the messages that arrived since, plan, record the
 * plan together with its outbox (the crash-safe point: a recorded segment will be delivered, an
 * unrecorded one was never sent), deliver and report, then clear the outbox and set when the
 * channel is next due. A tick that finds another tick's live lease, or loses the race to record,
 * leaves the channel alone.
 */
export async function processChannel(
  deps: TickDependencies,
  channel: string,
): Promise<ChannelReport> {
  const { settings } = deps;
  const now = deps.now();
  const wall = deps.wallNow();
  const record = await deps.channels.get(channel);
  if (record.leaseUntil !== null && record.leaseUntil > wall) {
    return { outcome: "leased", delivered: [], dropped: [], late: 0 };
  }
  const horizon = BigInt(wall - settings.readLagMs) * 1_000_000n;
  const { arrivals, capped } = await readArrivals(
    deps.messages,
    record,
    horizon,
    settings.maxArrivalsPerChannel,
  );
  const contents = new Map<string, Message>();
  const refs: MessageRef[] = [];
  for (const { message } of arrivals) {
    if (message.id === undefined || message.ts === undefined) continue;
    refs.push({ id: message.id, ts: message.ts });
    contents.set(message.id, message);
  }
  const result = plan(channel, record.planner, refs, now, settings);
  const outbox: Outbox = {
    segments: [...record.outbox.segments, ...result.segments],
    dropped: [...record.outbox.dropped, ...result.dropped],
    late: record.outbox.late + result.late.length,
  };
  const lastRead = arrivals.at(-1)?.position;
  const readUpTo =
    capped && lastRead !== undefined ? lastRead : maxPosition(record.readUpTo, horizon);
  const recorded = await deps.channels.record(record, {
    planner: result.state,
    readUpTo,
    outbox,
    leaseUntil: wall + settings.leaseMs,
  });
  if (!recorded) return { outcome: "conflict", delivered: [], dropped: [], late: 0 };
  await deliver(deps, channel, outbox.segments, contents);
  report(deps, channel, outbox);
  const unread = capped || (record.lastArrival !== null && record.lastArrival > horizon);
  await deps.channels.finish(
    { ...record, version: record.version + 1 },
    unread ? now : result.nextDueAt,
  );
  return {
    outcome: "done",
    delivered: outbox.segments,
    dropped: outbox.dropped,
    late: outbox.late,
  };
}

async function readArrivals(
  messages: MessageSource,
  record: ChannelRecord,
  horizon: bigint,
  limit: number,
): Promise<{ arrivals: PositionedMessage[]; capped: boolean }> {
  const arrivals: PositionedMessage[] = [];
  if (record.readUpTo !== null && record.readUpTo >= horizon) return { arrivals, capped: false };
  for await (const arrival of messages.readAfter(record.channel, record.readUpTo ?? undefined, {
    upTo: horizon,
  })) {
    if (arrivals.length === limit) return { arrivals, capped: true };
    arrivals.push(arrival);
  }
  return { arrivals, capped: false };
}

const maxPosition = (a: bigint | null, b: bigint): bigint => (a !== null && a > b ? a : b);

/** Sends the outbox in order, reading from the store only the messages not already in hand. */
async function deliver(
  deps: TickDependencies,
  channel: string,
  outbox: PlannedSegment[],
  contents: Map<string, Message>,
): Promise<void> {
  if (outbox.length === 0) return;
  const missing = outbox
    .flatMap((s) => s.messages.map((m) => m.id))
    .filter((id) => !contents.has(id));
  for (const message of await deps.messages.getMessages(channel, missing)) {
    if (message.id !== undefined) contents.set(message.id, message);
  }
  const entries = outbox.map((segment) => {
    const messages = segment.messages.map((ref) => {
      const message = contents.get(ref.id);
      if (!message)
        throw new Error(`message ${ref.id} of segment ${segment.segmentId} is not in the store`);
      return message;
    });
    return { segment, body: deps.body(segment, messages) };
  });
  await deps.sink.send(entries);
}

/**
 * Counts and logs what a recorded outbox delivered. It runs before the outbox is cleared, so a
 * tick that dies in between has the next one report again: counts are at least once, and no
 * drop goes unreported.
 */
function report(deps: TickDependencies, channel: string, outbox: Outbox): void {
  deps.metrics.add("ChannelsProcessed", 1);
  deps.metrics.add("SegmentsEmitted", outbox.segments.length);
  deps.metrics.add(
    "MessagesSegmented",
    outbox.segments.reduce((sum, s) => sum + s.messages.length, 0),
  );
  deps.metrics.add("LateMessages", outbox.late);
  deps.metrics.add("DroppedMessages", outbox.dropped.length);
  if (outbox.dropped.length > 0) {
    deps.logger.warn("messages dropped below minItems", {
      channel,
      ids: outbox.dropped.map((m) => m.id),
    });
  }
  if (outbox.late > 0) deps.logger.info("late messages delivered", { channel, late: outbox.late });
}
