import { randomUUID } from "node:crypto";
import type { Arrival, Message } from "../history/index.js";
import {
  type BrokenHold,
  type ChannelSnapshot,
  type ChannelStore,
  type DueChannel,
  encodeTickState,
  type Hold,
  hasWork,
  idDigest,
  type Outbox,
  type TickState,
} from "./channel-state.js";
import { MAX_STATE_BYTES } from "./channel-table.js";
import { type BodyOptions, deliverSegments } from "./delivery.js";
import { plan } from "./planner.js";
import type {
  MessageRef,
  PipelineConfig,
  PlannedSegment,
  SegmentDelivery,
  TickShare,
} from "./types.js";

/** Where the tick reads messages: the history store (either backend) satisfies it. */
export interface MessageSource {
  /** Positions, ids and timestamps of what arrived after `after`, up to `upTo`, in position order. */
  arrivalsAfter(
    channel: string,
    after: bigint | undefined,
    options?: { upTo?: bigint },
  ): AsyncIterable<Arrival>;
  /** The stored messages with these ids, in the order of `ids`; missing ones left out. */
  getMessages(channel: string, ids: readonly string[]): Promise<Message[]>;
}

/** Where closed segments go (SQS in production), in order, each with its message body. */
export interface SegmentSink {
  send(entries: SegmentDelivery[]): Promise<void>;
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
  | "OldestDueAgeMs"
  | "ArrivalsBehindReadPosition"
  | "HoldsBroken"
  | "MissingMessages"
  | "ChannelStateBytes"
  | "SharesBusy"
  | "WorkersInvoked"
  | "WorkerInvokeErrors";

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
  /** Arrivals read per channel per tick; the rest waits for the next tick (bounds memory and state). */
  maxArrivalsPerChannel: number;
  /** How long a recording tick owns its undelivered segments before another may resend them. */
  leaseMs: number;
  /** Channels processed at once within a tick. */
  channelConcurrency: number;
  /**
   * How long a writer's hold may block reading (from when a tick first sees it) before the tick
   * presumes the writer gone and breaks it. Writers stop starting puts under a hold after a
   * minute, so this only ends holds of writers that crashed or hang.
   */
  holdTimeoutMs: number;
}

/** Bytes of arrival refs (ids and timestamps) read per channel per tick, besides the count cap. */
export const MAX_ARRIVAL_BYTES = 1024 * 1024;
/** A tick reads fewer arrivals rather than record a state over this (a quarter of the limit). */
export const TARGET_STATE_BYTES = MAX_STATE_BYTES / 4;
/** How long the positions of a broken hold are re-read for late writes of its writer. */
export const BROKEN_HOLD_WATCH_MS = 24 * 3_600_000;

export interface TickDependencies {
  messages: MessageSource;
  channels: ChannelStore;
  sink: SegmentSink;
  bodies: BodyOptions;
  metrics: PipelineMetrics;
  logger: PipelineLogger;
  settings: TickSettings;
  /** The pipeline clock (epoch ms): decides what has settled, and due times. */
  now: () => number;
  /** The wall clock (epoch ms): leases and how long holds have been seen. */
  wallNow: () => number;
}

export type ChannelOutcome = "done" | "unchanged" | "leased" | "conflict";

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
 * first) is processed, a few at a time, until the list ends or `shouldStop` (the time budget)
 * says to take no more. A channel that fails is logged with its id, counted and left due: the
 * next tick retries it, and the others go on. With a `share`, only the channels of that share's
 * shards: one worker's part of a fanned-out tick (`runShare`).
 */
export async function runTick(
  deps: TickDependencies,
  shouldStop: () => boolean = () => false,
  share?: TickShare,
): Promise<TickSummary> {
  const started = deps.wallNow();
  const summary = emptyTickSummary(randomUUID());
  const due = deps.channels.dueChannels(deps.now(), share)[Symbol.asyncIterator]();
  // The longest-waiting channel comes first: how long it has waited is the backlog an operator
  // alarms on.
  let first: IteratorResult<DueChannel> | undefined;
  if (!shouldStop()) {
    first = await due.next();
    deps.metrics.add(
      "OldestDueAgeMs",
      first.done ? 0 : Math.max(0, deps.now() - first.value.dueAt),
    );
  }
  const taken = new Set<string>();
  const worker = async () => {
    for (;;) {
      if (shouldStop()) {
        summary.stoppedEarly = true;
        return;
      }
      const next = first ?? (await due.next());
      first = undefined;
      if (next.done) return;
      if (taken.has(next.value.channel)) continue;
      taken.add(next.value.channel);
      await processDueChannel(deps, next.value.channel, summary);
    }
  };
  await Promise.all(Array.from({ length: deps.settings.channelConcurrency }, worker));
  deps.metrics.add("TickDurationMs", deps.wallNow() - started);
  if (summary.stoppedEarly) deps.metrics.add("TicksStoppedEarly", 1);
  deps.logger.info("tick finished", { ...summary, ...(share && { share }) });
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

const nothing = (outcome: ChannelOutcome): ChannelReport => ({
  outcome,
  delivered: [],
  dropped: [],
  late: 0,
});

/**
 * Processes one channel: read its records and what arrived since, plan, record the plan with its
 * outbox (the crash-safe point: a recorded segment will be delivered, an unrecorded one was never
 * sent), deliver and report, then mark it delivered and set when the channel is next due.
 *
 * An outbox that a tick recorded but did not confirm is sent again first, with nothing new read,
 * once its lease has expired: a delivery that keeps failing leaves the state as it is. A tick that
 * loses the race to record leaves the channel alone.
 */
export async function processChannel(
  deps: TickDependencies,
  channel: string,
): Promise<ChannelReport> {
  const snapshot = await deps.channels.load(channel);
  const { record, marks } = snapshot;
  const now = deps.now();
  const wall = deps.wallNow();
  deps.metrics.add("ChannelStateBytes", snapshot.stateBytes);
  if (hasWork(record.state.outbox) && marks.delivered < record.version) {
    if (record.leaseUntil !== null && record.leaseUntil > wall) return nothing("leased");
    return commit(deps, snapshot, record.state, { expired: [], nextDueAt: now });
  }
  const step = await advance(deps, snapshot, now, wall);
  if (!step.changed) {
    await deps.channels.finish(snapshot, record.version, step.nextDueAt, now);
    return nothing("unchanged");
  }
  if (step.behind > 0) {
    deps.metrics.add("ArrivalsBehindReadPosition", step.behind);
    deps.logger.warn("arrivals found behind the read position (a broken hold's writer came back)", {
      channel,
      arrivals: step.behind,
    });
  }
  return commit(deps, snapshot, step.state, step);
}

interface Step {
  state: TickState;
  changed: boolean;
  /** Holds to break once the state recording them as broken is written. */
  expired: Hold[];
  /** Arrivals found by re-reading broken holds' positions. */
  behind: number;
  nextDueAt: number | null;
}

/**
 * Reads what arrived since the read position, as far as no writer holds positions, plans it, and
 * returns the next state. Reads fewer arrivals when the state would grow too large.
 */
async function advance(
  deps: TickDependencies,
  snapshot: ChannelSnapshot,
  now: number,
  wall: number,
): Promise<Step> {
  const { channel, marks, record } = snapshot;
  const state = record.state;
  const { holdsSeen, expired, known } = trackHolds(
    state,
    marks.holds,
    wall,
    deps.settings.holdTimeoutMs,
  );
  const horizon = readHorizon(marks.seq, marks.holds);
  const { arrivals, capped } = await readArrivals(
    deps.messages,
    channel,
    state.readUpTo,
    horizon,
    deps.settings,
  );
  const broken = state.broken
    .filter((b) => b.until > wall)
    .map((b) => ({ ...b, seen: [...b.seen] }));
  const behind = await rereadBroken(deps.messages, channel, broken, state.readUpTo);
  for (const hold of expired) {
    if (known.has(hold.name)) continue;
    const last = hold.first + BigInt(hold.count) - 1n;
    broken.push({
      hold: hold.name,
      first: hold.first,
      last,
      seen: [],
      until: wall + BROKEN_HOLD_WATCH_MS,
    });
  }
  const planned = planWithinBound(deps, channel, state, { arrivals, capped, behind, horizon, now });
  const next: TickState = { ...planned.state, holdsSeen, broken: markSeen(broken, planned.taken) };
  const dueTimes = [planned.nextDueAt];
  if (planned.trimmed || expired.length > 0) dueTimes.push(now);
  if (marks.holds.length > 0 || broken.length > 0) dueTimes.push(now + deps.settings.holdTimeoutMs);
  const due = dueTimes.filter((t): t is number => t !== null);
  return {
    state: next,
    changed: !sameBytes(encodeTickState(next), encodeTickState(state)),
    expired,
    behind: behind.length,
    nextDueAt: due.length === 0 ? null : Math.min(...due),
  };
}

/**
 * When (wall ms) each present hold was first seen, the holds to break (seen for the hold timeout,
 * or already recorded as broken by a tick that died before removing them), and those recorded.
 */
function trackHolds(state: TickState, holds: readonly Hold[], wall: number, timeoutMs: number) {
  const holdsSeen: Record<string, number> = {};
  for (const hold of holds) holdsSeen[hold.name] = state.holdsSeen[hold.name] ?? wall;
  const known = new Set(state.broken.map((b) => b.hold));
  const expired = holds.filter((h) => known.has(h.name) || wall - holdsSeen[h.name] >= timeoutMs);
  for (const hold of expired) delete holdsSeen[hold.name];
  return { holdsSeen, expired, known };
}

/**
 * Plans the arrivals, halving how many it takes until the state would stay under
 * {@link TARGET_STATE_BYTES} (taking none at worst). Returns the planner's state, the read
 * position and outbox that go with it, the arrivals taken, and whether some were left.
 */
function planWithinBound(
  deps: TickDependencies,
  channel: string,
  state: TickState,
  read: {
    arrivals: Arrival[];
    capped: boolean;
    behind: MessageRef[];
    horizon: bigint | null;
    now: number;
  },
) {
  const { arrivals, capped, behind, horizon, now } = read;
  const config = {
    ...deps.settings,
    idBytesPerSegment: idBytesPerSegment(deps.bodies.maxBodyBytes),
  };
  for (let kept = arrivals.length; ; kept = Math.floor(kept / 2)) {
    const taken = arrivals.slice(0, kept);
    const refs = [...behind, ...taken.flatMap(ref)];
    const trimmed = capped || kept < arrivals.length;
    const result = plan(
      channel,
      state.planner,
      refs,
      planningTime(state, refs, now, trimmed, kept, config),
      config,
    );
    const planned = {
      ...state,
      planner: result.state,
      readUpTo:
        taken.length === 0
          ? state.readUpTo
          : trimmed
            ? (taken.at(-1) as Arrival).position
            : (horizon as bigint),
      outbox: { segments: result.segments, dropped: result.dropped, late: result.late.length },
    };
    if (kept === 0 || encodeTickState(planned).byteLength <= TARGET_STATE_BYTES) {
      return { state: planned, taken, trimmed, nextDueAt: result.nextDueAt };
    }
  }
}

/**
 * The bytes of ids a segment's reference form can list within the body limit: the rest of the
 * envelope (its bounds repeat two ids, plus the channel and table names) takes at most 8 KiB.
 */
export const idBytesPerSegment = (maxBodyBytes: number): number => maxBodyBytes - 8 * 1024;

/**
 * The time to plan at. When arrivals were left unread (the cap, or a state kept small), the
 * conversation of the newest message read may go on in them: it is planned as still open, so
 * that a backlog read over several ticks gives the segments of one big read. Only when not a
 * single further arrival fits the state (very long ids in a huge open conversation) is it
 * planned at the real time, so that it settles and the channel moves on.
 */
function planningTime(
  state: TickState,
  refs: readonly MessageRef[],
  now: number,
  trimmed: boolean,
  kept: number,
  config: PipelineConfig,
): number {
  if (!trimmed || kept === 0) return now;
  let newest = Number.NEGATIVE_INFINITY;
  for (const message of state.planner.tail) newest = Math.max(newest, message.ts);
  for (const message of refs) newest = Math.max(newest, message.ts);
  return Math.min(now, newest + config.settle + config.grace);
}

/**
 * The last position a tick may read up to: every position up to the channel's sequence was
 * handed out, and none at or past a writer's hold may be passed while the writer still writes.
 */
function readHorizon(seq: bigint | null, holds: readonly Hold[]): bigint | null {
  let horizon = seq;
  for (const hold of holds) {
    if (horizon === null || hold.first - 1n < horizon) horizon = hold.first - 1n;
  }
  return horizon;
}

/** Arrivals after the read position up to the horizon, at most so many and so many bytes. */
async function readArrivals(
  messages: MessageSource,
  channel: string,
  readUpTo: bigint | null,
  horizon: bigint | null,
  settings: TickSettings,
): Promise<{ arrivals: Arrival[]; capped: boolean }> {
  const arrivals: Arrival[] = [];
  if (horizon === null || (readUpTo !== null && horizon <= readUpTo)) {
    return { arrivals, capped: false };
  }
  let bytes = 0;
  for await (const arrival of messages.arrivalsAfter(channel, readUpTo ?? undefined, {
    upTo: horizon,
  })) {
    if (arrivals.length >= settings.maxArrivalsPerChannel || bytes >= MAX_ARRIVAL_BYTES) {
      return { arrivals, capped: true };
    }
    arrivals.push(arrival);
    bytes += Buffer.byteLength(arrival.id ?? "") + 16;
  }
  return { arrivals, capped: false };
}

/**
 * Re-reads the positions of broken holds already passed by the read position; what was not seen
 * there before was written late by a writer whose hold was broken. Marks it seen.
 */
async function rereadBroken(
  messages: MessageSource,
  channel: string,
  broken: BrokenHold[],
  readUpTo: bigint | null,
): Promise<MessageRef[]> {
  const found: MessageRef[] = [];
  if (readUpTo === null) return found;
  for (const hold of broken) {
    if (hold.first > readUpTo) continue;
    const last = hold.last < readUpTo ? hold.last : readUpTo;
    const seen = new Set(hold.seen);
    for await (const arrival of messages.arrivalsAfter(channel, hold.first - 1n, { upTo: last })) {
      const message = ref(arrival);
      if (message.length === 0) continue;
      const digest = idDigest(message[0].id);
      if (seen.has(digest)) continue;
      seen.add(digest);
      hold.seen.push(digest);
      found.push(...message);
    }
  }
  return found;
}

/** Broken holds with the ids of these arrivals in their ranges marked seen. */
function markSeen(broken: BrokenHold[], arrivals: readonly Arrival[]): BrokenHold[] {
  if (broken.length === 0) return broken;
  return broken.map((hold) => {
    const seen = new Set(hold.seen);
    for (const arrival of arrivals) {
      if (
        arrival.id !== undefined &&
        arrival.position >= hold.first &&
        arrival.position <= hold.last
      ) {
        seen.add(idDigest(arrival.id));
      }
    }
    return { ...hold, seen: [...seen] };
  });
}

/** The planner's ref of an arrival; arrivals without a platform id or timestamp are not chat. */
const ref = (arrival: Arrival): MessageRef[] =>
  arrival.id === undefined || arrival.ts === undefined ? [] : [{ id: arrival.id, ts: arrival.ts }];

const sameBytes = (a: Uint8Array, b: Uint8Array) =>
  a.byteLength === b.byteLength && Buffer.from(a).equals(Buffer.from(b));

/**
 * Records `state` with a lease on its outbox, breaks the holds it recorded as broken, delivers the
 * outbox, reports it and marks it delivered.
 */
async function commit(
  deps: TickDependencies,
  snapshot: ChannelSnapshot,
  state: TickState,
  step: { expired: Hold[]; nextDueAt: number | null },
): Promise<ChannelReport> {
  const { channel } = snapshot;
  const recorded = await deps.channels.record(snapshot, {
    state,
    encoded: encodeTickState(state),
    leaseUntil: deps.wallNow() + deps.settings.leaseMs,
    recordId: randomUUID(),
  });
  if (recorded === "conflict") return nothing("conflict");
  if (step.expired.length > 0) {
    await deps.channels.breakHolds(
      channel,
      step.expired.map((h) => h.name),
    );
    deps.metrics.add("HoldsBroken", step.expired.length);
    deps.logger.warn("holds broken: their writers held positions past the hold timeout", {
      channel,
      holds: step.expired.map((h) => h.name),
    });
  }
  const { outbox } = state;
  const delivered = await deliverSegments(
    outbox.segments,
    (ids) => deps.messages.getMessages(channel, ids),
    (entries) => deps.sink.send(entries),
    deps.bodies,
  );
  report(deps, channel, outbox, delivered.sent, delivered.missing);
  await deps.channels.finish(snapshot, snapshot.record.version + 1, step.nextDueAt, deps.now());
  return { outcome: "done", delivered: delivered.sent, dropped: outbox.dropped, late: outbox.late };
}

/**
 * Counts and logs what a recorded outbox delivered. It runs before the outbox is marked
 * delivered, so a tick that dies in between has the next one report again: counts are at least
 * once, and no drop goes unreported.
 */
function report(
  deps: TickDependencies,
  channel: string,
  outbox: Outbox,
  sent: PlannedSegment[],
  missing: string[],
): void {
  deps.metrics.add("ChannelsProcessed", 1);
  deps.metrics.add("SegmentsEmitted", sent.length);
  deps.metrics.add(
    "MessagesSegmented",
    sent.reduce((sum, s) => sum + s.messages.length, 0),
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
  if (missing.length > 0) {
    deps.metrics.add("MissingMessages", missing.length);
    deps.logger.warn("messages of decided segments are no longer stored (cleared); left out", {
      channel,
      missing: missing.length,
      ids: missing.slice(0, 20),
    });
  }
}
