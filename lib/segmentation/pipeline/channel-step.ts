/**
 * One channel's step of a tick: its records read, the plan (`./channel-plan.ts`) recorded with
 * its outbox, the outbox delivered and reported, and the channel finished with its next due time.
 */
import { randomUUID } from "node:crypto";
import { advance, rewoundTo } from "./channel-plan.js";
import { type DeliveryReport, deliverSegments } from "./delivery.js";
import {
  type ChannelSnapshot,
  type Hold,
  hasWork,
  type Outbox,
  type TickState,
} from "./store/channel-state.js";
import { encodeTickState } from "./store/tick-state.js";
import type { TickDependencies } from "./tick-dependencies.js";
import type { MessageRef, PlannedSegment } from "./types.js";

type ChannelOutcome = "done" | "unchanged" | "leased" | "conflict";

export interface ChannelReport {
  outcome: ChannelOutcome;
  delivered: PlannedSegment[];
  dropped: MessageRef[];
  late: number;
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
  await restoreSequence(deps, snapshot);
  if (hasWork(record.state.outbox) && marks.delivered < record.version) {
    if (record.leaseUntil !== null && record.leaseUntil > wall) return nothing("leased");
    return commit(deps, snapshot, record.state, { expired: [], nextDueAt: now });
  }
  const step = await advance(deps, snapshot, now, wall);
  if (step.renewed.length > 0) {
    deps.metrics.add("HoldsRenewed", step.renewed.length);
    deps.logger.warn("holds renewed on positions handed out before: aged from the ones replaced", {
      channel,
      holds: step.renewed.map((h) => h.name),
    });
  }
  if (!step.changed) {
    await deps.channels.finish(snapshot, record.version, step.nextDueAt, now);
    return nothing("unchanged");
  }
  // Before the state that moves past them is recorded: a tick that dies in between links the
  // same arrivals from the same window again, and writes the same parents.
  if (step.links.length > 0) await deps.messages.recordInferredReplies(channel, step.links);
  if (step.behind > 0) {
    deps.metrics.add("ArrivalsBehindReadPosition", step.behind);
    deps.logger.warn("arrivals found behind the read position (a broken hold's writer came back)", {
      channel,
      arrivals: step.behind,
    });
  }
  return commit(deps, snapshot, step.state, step);
}

/**
 * Moves the channel's sequence past what was handed out when a writer outside ingestion's
 * protocol set it back, before anything else: whoever reserves next would write behind the read
 * position. Every path does it, a leased one too: it only ever raises the sequence.
 */
async function restoreSequence(deps: TickDependencies, snapshot: ChannelSnapshot): Promise<void> {
  const to = rewoundTo(snapshot);
  if (to === null) return;
  await deps.channels.advanceSequence(snapshot.channel, to);
  deps.metrics.add("SequenceRewound", 1);
  deps.logger.warn("the channel's sequence went back below positions handed out: moved past them", {
    channel: snapshot.channel,
    seq: snapshot.marks.seq?.toString() ?? null,
    movedTo: to.toString(),
  });
}

/**
 * Records `state` with a lease on its outbox, breaks the holds it recorded as broken, delivers the
 * outbox, reports it and marks it delivered.
 */
async function commit(
  deps: TickDependencies,
  snapshot: ChannelSnapshot,
  state: TickState,
  step: { expired: Hold[]; nextDueAt: number | null; merges?: number },
): Promise<ChannelReport> {
  const { channel } = snapshot;
  const recorded = await deps.channels.record(snapshot, {
    state,
    encoded: encodeTickState(state),
    leaseUntil: deps.wallNow() + deps.settings.leaseMs,
    recordId: randomUUID(),
  });
  if (recorded === "conflict") return nothing("conflict");
  // Counted once the state holding them is recorded: a tick that loses the race to record made
  // no merge, and the one that wins counts its own.
  if (step.merges !== undefined && step.merges > 0)
    deps.metrics.add("ConversationsMerged", step.merges);
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
  report(deps, channel, outbox, delivered);
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
  { sent, missing, deleted }: DeliveryReport,
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
  // Deletions are ordinary: counted, not logged one by one.
  if (deleted.length > 0) deps.metrics.add("DeletedBeforeDelivery", deleted.length);
}
