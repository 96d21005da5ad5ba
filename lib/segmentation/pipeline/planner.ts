/**
 * The pure planner of one channel's tick: given the channel's state, the messages that arrived
 * since the last tick and the time, it decides which segments are final, which arrivals are late,
 * which messages the `minItems` filter drops, and the next state. No I/O and no clock: the tick
 * persists the result and delivers it, and a crash before that simply means re-planning from the
 * old state (see `docs/specs/pipeline.md`, guarantees 1 to 4).
 */
import { createHash } from "node:crypto";
import { compareRefs } from "../../base/identity/index.js";
import { isPositiveInteger } from "../../base/numbers/index.js";
import { ConversationSegmenter, foldUndersizedLast } from "../segmenter/index.js";
import type {
  EmittedBound,
  LinkedRef,
  MessageRef,
  PipelineConfig,
  PlannedSegment,
  PlannerState,
} from "./types.js";

/**
 * The reply links the segmenter's size cut reads (the fewest severed, docs/segmenter.md): within
 * the carved items only, so a link to a message of an emitted segment is no link, as in one big
 * run where it reaches before the piece's start.
 */
const REPLIES = { id: (m: LinkedRef) => m.id, replyTo: (m: LinkedRef) => m.replyTo };

/** A ref without its link: what segments, the watermark and reports keep. */
const bare = ({ id, ts }: MessageRef): MessageRef => ({ id, ts });
const bareOrNull = (m: MessageRef | undefined): MessageRef | undefined =>
  m === undefined ? undefined : bare(m);

/** How many emitted segments the state remembers for naming where late messages belong. */
export const RECENT_LIMIT = 64;

export interface Plan {
  /** To deliver, in this order: the late segments, then the final segments in channel order. */
  segments: PlannedSegment[];
  /** Messages of final pieces below `minItems` (the segmenter's own filter): count and log them. */
  dropped: MessageRef[];
  /** Arrivals that landed at or before the watermark, in channel order. */
  late: MessageRef[];
  state: PlannerState;
  /** When to tick again without new arrivals; null when nothing is pending. */
  nextDueAt: number | null;
}

/**
 * Plans one tick of `channel`.
 *
 * 1. Arrivals already in the tail, or repeated, are ignored: overlapping reads.
 * 2. Arrivals at or before the watermark are late. They never re-open an emitted segment: they
 *    are grouped by the retained emitted segment they belong after (greatest `first` at or before
 *    them, else null) and delivered as late segments, never dropped.
 * 3. The tail and the other arrivals are carved, but only the messages older than `grace`
 *    ("beyond grace") count towards finality: ingestion may still deliver younger ones, in any
 *    order. Of those, a conversation followed by another, or quiet for longer than
 *    `settle + grace`, is settled: its undersized last piece folds into the one before, and every
 *    piece is final. In the open conversation every piece but the last is final, except that the
 *    second-to-last waits until the last holds `minItems` items, because a settling conversation
 *    folds an undersized last piece back into the one before it. Final pieces below `minItems`
 *    are dropped.
 *
 * Everything else stays in the tail; the watermark moves to the last message of the last final
 * piece.
 *
 * The caller must not feed back arrivals it has already planned past the recorded state (those
 * outside the tail would be taken for late messages), and must deliver what it recorded rather
 * than re-plan it: re-planning with more arrivals is only guaranteed to give the same segments
 * when arrivals stay in order within `grace`.
 *
 * @throws RangeError for an invalid setting (named), a non-finite `now` or arrival timestamp.
 */
export function plan(
  channel: string,
  state: PlannerState,
  arrivals: readonly LinkedRef[],
  now: number,
  config: PipelineConfig,
): Plan {
  validateConfig(config);
  if (!Number.isFinite(now)) throw new RangeError(`now must be finite epoch ms (got ${now})`);
  const fresh = freshArrivals(state.tail, arrivals);
  const late = fresh
    .filter((m) => isAtOrBefore(m, state.watermark))
    .sort(compareRefs)
    .map(bare);
  const items = [...state.tail, ...fresh.filter((m) => !isAtOrBefore(m, state.watermark))];
  items.sort(compareRefs);

  const stableCount = countBeyondGrace(items, now, config.grace);
  const { final, open } = splitFinal(items.slice(0, stableCount), now, config);
  const emitted = final.filter((piece) => piece.length >= config.minItems);
  const onTime = emitted.map((piece) => segment(channel, piece, false, null));
  const tail = [...open, ...items.slice(stableCount)];

  return {
    segments: [...lateSegments(channel, late, state.recent), ...onTime],
    dropped: final
      .filter((piece) => piece.length < config.minItems)
      .flat()
      .map(bare),
    late,
    state: {
      tail,
      watermark: bareOrNull(final.at(-1)?.at(-1)) ?? state.watermark,
      recent: [...state.recent, ...onTime.map(bound)].slice(-RECENT_LIMIT),
    },
    nextDueAt: nextDueAt(tail, now, config),
  };
}

/**
 * The id of a segment: a hash of the channel, its first message's id and whether it is late, so
 * that a redelivery carries the same id in any process.
 */
export function segmentId(channel: string, first: MessageRef, late: boolean): string {
  return createHash("sha256")
    .update(`${channel}\0${first.id}\0${late ? "late" : "final"}`)
    .digest("hex")
    .slice(0, 32);
}

function validateConfig({ maxSize, settle, minItems, grace }: PipelineConfig): void {
  positiveInteger("maxSize", maxSize);
  positiveInteger("minItems", minItems);
  nonNegativeDuration("settle", settle);
  nonNegativeDuration("grace", grace);
}

function positiveInteger(name: string, value: number): void {
  if (!isPositiveInteger(value)) {
    throw new RangeError(`${name} must be a positive integer (got ${value})`);
  }
}

function nonNegativeDuration(name: string, value: number): void {
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`${name} must be a finite, non-negative number of ms (got ${value})`);
  }
}

/** Arrivals not already in the tail, first occurrence of each id only, timestamps checked. */
function freshArrivals(tail: readonly LinkedRef[], arrivals: readonly LinkedRef[]): LinkedRef[] {
  const seen = new Set(tail.map((m) => m.id));
  const fresh: LinkedRef[] = [];
  for (const arrival of arrivals) {
    if (seen.has(arrival.id)) continue;
    if (!Number.isFinite(arrival.ts)) {
      throw new RangeError(`timestamp of arrival ${arrival.id} must be finite (got ${arrival.ts})`);
    }
    seen.add(arrival.id);
    fresh.push(arrival);
  }
  return fresh;
}

function isAtOrBefore(message: MessageRef, watermark: MessageRef | null): boolean {
  return watermark !== null && compareRefs(message, watermark) <= 0;
}

/**
 * Carves messages that are all beyond grace and splits the pieces into the final ones (a
 * prefix, in channel order) and the open rest (the messages of the non-final pieces).
 */
function splitFinal(
  stable: LinkedRef[],
  now: number,
  config: PipelineConfig,
): { final: LinkedRef[][]; open: LinkedRef[] } {
  const { maxSize, settle, minItems, grace } = config;
  const conversations = new ConversationSegmenter({ maxSize, settle, minItems }).conversations(
    stable,
    (m) => m.ts,
    sizeOf(config),
    REPLIES,
  );
  const last = conversations.pop();
  const final = conversations.flatMap((pieces) => foldUndersizedLast(pieces, minItems));
  if (last === undefined) return { final, open: [] };
  const lastTs = stable[stable.length - 1].ts;
  if (now - lastTs > settle + grace) {
    return { final: [...final, ...foldUndersizedLast(last, minItems)], open: [] };
  }
  const finalCount = finalPiecesOfOpen(last, minItems);
  return { final: [...final, ...last.slice(0, finalCount)], open: last.slice(finalCount).flat() };
}

/**
 * What a message takes of `maxSize`: one, unless its id is so long that `maxSize` such ids would
 * not fit `idBytesPerSegment` (the body limit, less the envelope): a segment's reference form
 * lists every id, and a segment that cannot be sent would hold its channel back for good. With
 * ids of ordinary length (under about 500 bytes at the defaults) every message counts one, as in
 * the reference segmenter.
 */
function sizeOf(config: PipelineConfig): ((m: MessageRef) => number) | undefined {
  const budget = config.idBytesPerSegment;
  if (budget === undefined) return undefined;
  return (m) => Math.max(1, ((Buffer.byteLength(m.id) + 3) * config.maxSize) / budget);
}

/**
 * How many leading pieces of the open conversation are final: all but the last, and of those the
 * second-to-last only when the last holds `minItems` items, so that no fold can reach it.
 */
function finalPiecesOfOpen(pieces: LinkedRef[][], minItems: number): number {
  const lastIndex = pieces.length - 1;
  return pieces[lastIndex].length >= minItems ? lastIndex : Math.max(lastIndex - 1, 0);
}

function segment(
  channel: string,
  messages: LinkedRef[],
  late: boolean,
  belongsAfter: string | null,
): PlannedSegment {
  return {
    segmentId: segmentId(channel, messages[0], late),
    channel,
    messages: messages.map(bare),
    late,
    belongsAfter,
  };
}

function bound({ segmentId, messages }: PlannedSegment): EmittedBound {
  return { segmentId, first: messages[0] };
}

/**
 * One late segment per retained emitted segment the late messages (in channel order) belong after,
 * or per unknown place (null). Belonging is monotone in channel order, so each group is a run.
 */
function lateSegments(
  channel: string,
  late: readonly MessageRef[],
  recent: readonly EmittedBound[],
): PlannedSegment[] {
  const groups: { after: string | null; messages: MessageRef[] }[] = [];
  for (const message of late) {
    const after = belongsAfter(message, recent);
    const group = groups.at(-1);
    if (group !== undefined && group.after === after) group.messages.push(message);
    else groups.push({ after, messages: [message] });
  }
  return groups.map((g) => segment(channel, g.messages, true, g.after));
}

/** The retained emitted segment with the greatest first message at or before `message`. */
function belongsAfter(message: MessageRef, recent: readonly EmittedBound[]): string | null {
  let best: EmittedBound | null = null;
  for (const candidate of recent) {
    if (compareRefs(candidate.first, message) > 0) continue;
    if (best === null || compareRefs(candidate.first, best.first) > 0) best = candidate;
  }
  return best?.segmentId ?? null;
}

/**
 * The earliest time at which the tail can change without new arrivals (ms timestamps): when its
 * oldest message still within grace moves beyond it, or when the conversation of its newest
 * message beyond grace settles. Ticking earlier without arrivals plans nothing.
 */
function nextDueAt(
  tail: readonly MessageRef[],
  now: number,
  config: PipelineConfig,
): number | null {
  const { settle, grace } = config;
  const old = countBeyondGrace(tail, now, grace);
  const due: number[] = [];
  if (old < tail.length) due.push(tail[old].ts + grace + 1);
  if (old > 0) due.push(tail[old - 1].ts + settle + grace + 1);
  return due.length === 0 ? null : Math.min(...due);
}

/** How many leading messages (in channel order) are older than `grace`. */
function countBeyondGrace(messages: readonly MessageRef[], now: number, grace: number): number {
  const firstYoung = messages.findIndex((m) => now - m.ts <= grace);
  return firstYoung === -1 ? messages.length : firstYoung;
}
