/**
 * A channel's streams: its own timeline, and one per thread (Slack `thread_ts`, a Discord thread,
 * a Telegram forum topic). A thread's replies are segmented on their own, with the same settle,
 * size, `minItems` and late rules as the channel (`./planner.ts`, run once per stream); the root
 * message, and every message without a `thread`, stays in the channel's stream. Pure, like the
 * planner: the tick records every stream's state and outbox in the channel's one tick state, so
 * the read position, holds, lease and exactly-once delivery are the channel's, unchanged.
 */
import { compareRefs } from "../../base/identity/index.js";
import { type ConversationMerge, settleMerges } from "../linker/index.js";
import { plan } from "./planner.js";
import type {
  LinkedRef,
  MessageRef,
  PipelineConfig,
  PlannedSegment,
  PlannerState,
} from "./types.js";

/**
 * An arrival as the tick plans it: its ref, the root of its thread when it is a reply in one, and
 * in `linked` mode the conversation the reply linker put it in (its first message's id).
 */
export interface StreamRef extends LinkedRef {
  thread?: string;
  conversation?: string;
}

/**
 * The planner state of one thread of the channel, keyed by its root message's id, or with
 * `conversation` set, of one linked conversation (keyed by its first message's id, which is in
 * it: a conversation's stream holds its first message, a thread's does not).
 */
export interface ThreadState {
  root: string;
  planner: PlannerState;
  conversation?: true;
}

/** Every stream's planner state of one channel. */
export interface StreamStates {
  /** The channel's own stream (roots and messages outside threads). */
  planner: PlannerState;
  /** The threads with an open tail or a remembered watermark, ordered by root id. */
  threads: readonly ThreadState[];
  /**
   * The greatest watermark of the threads forgotten to keep the state bounded (null: none): a
   * reply of a thread with no state at or before it is late, as it would have been had its
   * thread been remembered (it can only be, since such a reply is out of order by more than
   * `settle`), with `belongsAfter` unknown (null).
   */
  threadFloor: MessageRef | null;
}

export interface StreamsPlan extends StreamStates {
  /** The late segments of every stream first, then the final ones, by first message. */
  segments: PlannedSegment[];
  dropped: MessageRef[];
  late: MessageRef[];
  nextDueAt: number | null;
}

/**
 * Threads with nothing open (every message emitted) whose watermark is remembered for the late
 * rule, at most: past it, those with the oldest watermark are forgotten (`threadFloor`).
 */
export const MAX_IDLE_THREADS = 256;
/** Emitted segments each thread remembers for `belongsAfter` (the channel's stream keeps 64). */
const THREAD_RECENT_LIMIT = 4;

/**
 * The stream an arrival belongs to, as a key: its thread's, its linked conversation's, or
 * undefined for the channel's own. A thread and a conversation may share a root id (a thread's
 * root starts a conversation), so the keys say which.
 */
function streamOf(ref: StreamRef): string | undefined {
  if (ref.thread !== undefined && ref.thread !== ref.id) return threadKey(ref.thread);
  return ref.conversation === undefined ? undefined : conversationKey(ref.conversation);
}

const threadKey = (root: string) => `t${root}`;
const conversationKey = (root: string) => `c${root}`;
const keyOf = (state: ThreadState) =>
  state.conversation ? conversationKey(state.root) : threadKey(state.root);

/**
 * Plans every stream of `channel` for one tick: the arrivals are split by stream (an arrival
 * already in any stream's tail is a repeat, ignored), each stream with arrivals or an open tail
 * is planned, and idle threads past {@link MAX_IDLE_THREADS} are forgotten. A linked
 * conversation the linker merged into another (`merges`, in the order made; the arrivals already
 * name the conversation kept) hands its open tail to the one kept, where it is planned as
 * arrivals: late there when that stream went past it, so delivered, never lost.
 */
export function planStreams(
  channel: string,
  states: StreamStates,
  arrivals: readonly StreamRef[],
  now: number,
  config: PipelineConfig,
  merges: readonly ConversationMerge[] = [],
): StreamsPlan {
  const inTails = new Set(states.planner.tail.map((m) => m.id));
  for (const thread of states.threads) for (const m of thread.planner.tail) inTails.add(m.id);
  const own: LinkedRef[] = [];
  const byThread = new Map<string, LinkedRef[]>();
  const streams = merges.length === 0 ? states.threads : handOver(states.threads, merges, byThread);
  for (const arrival of arrivals) {
    if (inTails.has(arrival.id)) continue;
    const stream = streamOf(arrival);
    const ref: LinkedRef = { id: arrival.id, ts: arrival.ts };
    if (arrival.replyTo !== undefined && arrival.replyTo !== arrival.id) {
      ref.replyTo = arrival.replyTo;
    }
    if (stream === undefined) {
      own.push(ref);
      continue;
    }
    const group = byThread.get(stream);
    if (group === undefined) byThread.set(stream, [ref]);
    else group.push(ref);
  }
  const main = plan(channel, states.planner, own, now, config);
  const segments = [...main.segments];
  const dropped = [...main.dropped];
  const late = [...main.late];
  const due = [main.nextDueAt];
  const known = new Map(streams.map((t) => [keyOf(t), t]));
  for (const key of byThread.keys()) {
    if (known.has(key)) continue;
    const root = key.slice(1);
    const start = { root, planner: threadStart(states.threadFloor) };
    known.set(key, key === conversationKey(root) ? { ...start, conversation: true } : start);
  }
  const threads: ThreadState[] = [];
  for (const [key, stream] of known) {
    const fresh = byThread.get(key) ?? [];
    if (fresh.length === 0 && stream.planner.tail.length === 0) {
      threads.push(stream);
      continue;
    }
    const planned = plan(channel, stream.planner, fresh, now, config);
    const named = stream.conversation ? { conversation: stream.root } : { thread: stream.root };
    segments.push(...planned.segments.map((s) => ({ ...s, ...named })));
    dropped.push(...planned.dropped);
    late.push(...planned.late);
    due.push(planned.nextDueAt);
    const recent = planned.state.recent.slice(-THREAD_RECENT_LIMIT);
    threads.push({ ...stream, planner: { ...planned.state, recent } });
  }
  const kept = forgetIdle(threads, states.threadFloor);
  const times = due.filter((t): t is number => t !== null);
  return {
    segments: ordered(segments),
    dropped: dropped.sort(compareRefs),
    late: late.sort(compareRefs),
    planner: main.state,
    threads: kept.threads.sort((a, b) => compare(keyOf(a), keyOf(b))),
    threadFloor: kept.floor,
    nextDueAt: times.length === 0 ? null : Math.min(...times),
  };
}

/**
 * `threads` with the open tail of each conversation merged into another emptied, and the tail
 * put in `byStream` under the conversation it is in now.
 */
function handOver(
  threads: readonly ThreadState[],
  merges: readonly ConversationMerge[],
  byStream: Map<string, LinkedRef[]>,
): ThreadState[] {
  const settled = settleMerges(merges);
  return threads.map((stream) => {
    if (stream.conversation !== true || stream.planner.tail.length === 0) return stream;
    const into = settled(stream.root);
    if (into === stream.root) return stream;
    const key = conversationKey(into);
    byStream.set(key, [...(byStream.get(key) ?? []), ...stream.planner.tail]);
    return { ...stream, planner: { ...stream.planner, tail: [] } };
  });
}

/** The newest timestamp of every stream's tail (for planning a backlog read over ticks). */
export function newestInTails(states: StreamStates): number {
  let newest = Number.NEGATIVE_INFINITY;
  for (const m of states.planner.tail) newest = Math.max(newest, m.ts);
  for (const t of states.threads) for (const m of t.planner.tail) newest = Math.max(newest, m.ts);
  return newest;
}

/** A thread with no state: nothing emitted, unless forgotten threads set a floor. */
const threadStart = (floor: MessageRef | null): PlannerState => ({
  tail: [],
  watermark: floor,
  recent: [],
});

/**
 * Keeps at most {@link MAX_IDLE_THREADS} idle threads (empty tail), forgetting those with the
 * oldest watermark, and raises the floor to the greatest watermark forgotten.
 */
function forgetIdle(
  threads: ThreadState[],
  floor: MessageRef | null,
): { threads: ThreadState[]; floor: MessageRef | null } {
  const idle = threads.filter((t) => t.planner.tail.length === 0);
  if (idle.length <= MAX_IDLE_THREADS) return { threads, floor };
  idle.sort((a, b) => byWatermark(a.planner.watermark, b.planner.watermark));
  const forgotten = new Set(idle.slice(0, idle.length - MAX_IDLE_THREADS));
  let raised = floor;
  for (const t of forgotten) {
    const mark = t.planner.watermark;
    if (mark === null) continue;
    if (raised === null || compareRefs(mark, raised) > 0) raised = mark;
  }
  return { threads: threads.filter((t) => !forgotten.has(t)), floor: raised };
}

function byWatermark(a: MessageRef | null, b: MessageRef | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  return compareRefs(a, b);
}

/** Late segments first (the planner's own order), then the final ones by first message. */
function ordered(segments: PlannedSegment[]): PlannedSegment[] {
  const late = segments.filter((s) => s.late);
  const onTime = segments.filter((s) => !s.late);
  const byFirst = (a: PlannedSegment, b: PlannedSegment) =>
    compareRefs(a.messages[0], b.messages[0]);
  return [...late.sort(byFirst), ...onTime.sort(byFirst)];
}

/** Code-unit order, the same in every process (ids are opaque). */
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
