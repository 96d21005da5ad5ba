/**
 * A channel's streams: its own timeline, and one per thread (Slack `thread_ts`, a Discord thread,
 * a Telegram forum topic). A thread's replies are segmented on their own, with the same settle,
 * size, `minItems` and late rules as the channel (`./planner.ts`, run once per stream); the root
 * message, and every message without a `thread`, stays in the channel's stream. Pure, like the
 * planner: the tick records every stream's state and outbox in the channel's one tick state, so
 * the read position, holds, lease and exactly-once delivery are the channel's, unchanged.
 */
import { compareRefs } from "../../base/identity/index.js";
import { plan } from "./planner.js";
import type {
  LinkedRef,
  MessageRef,
  PipelineConfig,
  PlannedSegment,
  PlannerState,
} from "./types.js";

/** An arrival as the tick plans it: its ref, and the root of its thread when it is a reply in one. */
export interface StreamRef extends LinkedRef {
  thread?: string;
}

/** The planner state of one thread of the channel, keyed by its root message's id. */
export interface ThreadState {
  root: string;
  planner: PlannerState;
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

/** The stream an arrival belongs to: its thread's root, or undefined for the channel's own. */
function streamOf(ref: StreamRef): string | undefined {
  return ref.thread !== undefined && ref.thread !== ref.id ? ref.thread : undefined;
}

/**
 * Plans every stream of `channel` for one tick: the arrivals are split by stream (an arrival
 * already in any stream's tail is a repeat, ignored), each stream with arrivals or an open tail
 * is planned, and idle threads past {@link MAX_IDLE_THREADS} are forgotten.
 */
export function planStreams(
  channel: string,
  states: StreamStates,
  arrivals: readonly StreamRef[],
  now: number,
  config: PipelineConfig,
): StreamsPlan {
  const inTails = new Set(states.planner.tail.map((m) => m.id));
  for (const thread of states.threads) for (const m of thread.planner.tail) inTails.add(m.id);
  const own: LinkedRef[] = [];
  const byThread = new Map<string, LinkedRef[]>();
  for (const arrival of arrivals) {
    if (inTails.has(arrival.id)) continue;
    const root = streamOf(arrival);
    const ref: LinkedRef = { id: arrival.id, ts: arrival.ts };
    if (arrival.replyTo !== undefined && arrival.replyTo !== arrival.id) {
      ref.replyTo = arrival.replyTo;
    }
    if (root === undefined) {
      own.push(ref);
      continue;
    }
    const group = byThread.get(root);
    if (group === undefined) byThread.set(root, [ref]);
    else group.push(ref);
  }
  const main = plan(channel, states.planner, own, now, config);
  const segments = [...main.segments];
  const dropped = [...main.dropped];
  const late = [...main.late];
  const due = [main.nextDueAt];
  const known = new Map(states.threads.map((t) => [t.root, t.planner]));
  for (const root of byThread.keys()) {
    if (!known.has(root)) known.set(root, threadStart(states.threadFloor));
  }
  const threads: ThreadState[] = [];
  for (const [root, state] of known) {
    const fresh = byThread.get(root) ?? [];
    if (fresh.length === 0 && state.tail.length === 0) {
      threads.push({ root, planner: state });
      continue;
    }
    const planned = plan(channel, state, fresh, now, config);
    segments.push(...planned.segments.map((s) => ({ ...s, thread: root })));
    dropped.push(...planned.dropped);
    late.push(...planned.late);
    due.push(planned.nextDueAt);
    const recent = planned.state.recent.slice(-THREAD_RECENT_LIMIT);
    threads.push({ root, planner: { ...planned.state, recent } });
  }
  const kept = forgetIdle(threads, states.threadFloor);
  const times = due.filter((t): t is number => t !== null);
  return {
    segments: ordered(segments),
    dropped: dropped.sort(compareRefs),
    late: late.sort(compareRefs),
    planner: main.state,
    threads: kept.threads.sort((a, b) => compare(a.root, b.root)),
    threadFloor: kept.floor,
    nextDueAt: times.length === 0 ? null : Math.min(...times),
  };
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
  const forgotten = new Set(idle.slice(0, idle.length - MAX_IDLE_THREADS).map((t) => t.root));
  let raised = floor;
  for (const t of threads) {
    const mark = t.planner.watermark;
    if (!forgotten.has(t.root) || mark === null) continue;
    if (raised === null || compareRefs(mark, raised) > 0) raised = mark;
  }
  return { threads: threads.filter((t) => !forgotten.has(t.root)), floor: raised };
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
