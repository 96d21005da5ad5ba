/**
 * A channel's pipeline state, as the tick sees it, and the store interface it is kept behind
 * (`DynamoDbChannelStore` in production, `MemoryChannelStore` for fast deterministic tests);
 * `./tick-state.ts` is the tick state's stored form.
 *
 * Each channel has two records with different writers:
 * - its marks, kept by ingestion and touched by the tick only to finish: the position sequence,
 *   the holds of writers still writing, a release counter, the due time, which recorded version
 *   was delivered, and an erasure's request to reset the reply linker. Small, so that a mark
 *   costs one write unit;
 * - its tick state, written only by the tick, once per tick that changes something, in one
 *   conditional write on its version: the planner's open tail and watermark, the read position,
 *   the outbox of decided segments, and the bookkeeping of holds.
 */
import type { LinkerState } from "../../linker/index.js";
import { holdCount } from "../schema/table.js";
import type { ThreadState } from "../streams.js";
import {
  EMPTY_PLANNER_STATE,
  type MessageRef,
  type PlannedSegment,
  type PlannerState,
  type TickShare,
} from "../types.js";

/** Positions a writer still holds: reserved, maybe not yet written. */
export interface Hold {
  /** The hold's attribute name; unique per reservation. */
  name: string;
  first: bigint;
  count: number;
}

export interface ChannelMarks {
  /** The last position handed out (null: none yet). */
  seq: bigint | null;
  /** Leases released so far. */
  marks: number;
  holds: Hold[];
  /** When the channel is next due (pipeline clock), or null when nothing is pending. */
  dueAt: number | null;
  /** The recorded version whose outbox was delivered (0: none). */
  delivered: number;
  /**
   * The latest erasure's request (wall ms, only ever raised) to drop the reply linker's window
   * (`TickState.linkerResetSeen`); null: none ever.
   */
  linkerReset: number | null;
}

export const EMPTY_MARKS: ChannelMarks = Object.freeze({
  seq: null,
  marks: 0,
  holds: [],
  dueAt: null,
  delivered: 0,
  linkerReset: null,
});

/**
 * What a tick has decided and recorded but not yet confirmed: segments to deliver, and the
 * dropped and late messages to report. A tick that dies before confirming leaves it for the next.
 */
export interface Outbox {
  segments: PlannedSegment[];
  dropped: MessageRef[];
  late: number;
}

const EMPTY_OUTBOX: Outbox = Object.freeze({ segments: [], dropped: [], late: 0 });

/**
 * Positions whose hold the tick broke (its writer stopped answering): the writer may still
 * write there, behind the read position. The tick re-reads the range until `until` (wall ms)
 * and takes what it has not `seen` (id digests) as new arrivals.
 */
export interface BrokenHold {
  hold: string;
  first: bigint;
  last: bigint;
  seen: string[];
  until: number;
}

export interface TickState {
  /** The channel's own stream. */
  planner: PlannerState;
  /** Its threads' streams (`../streams.ts`), by root id; absent: none. */
  threads?: ThreadState[];
  /** The greatest watermark of threads forgotten to keep the state bounded; absent: none. */
  threadFloor?: MessageRef;
  /**
   * In `linked` mode, the reply linker's window (`../../linker/`), so that the next tick links
   * its arrivals as one linker that never stopped would; absent: none yet, or `contiguous`.
   */
  linker?: LinkerState;
  /**
   * The marks' `linkerReset` this state has acted on: a greater one (an erasure since) makes the
   * next tick drop `linker`, in the same write that records it here. Absent: none yet.
   */
  linkerResetSeen?: number;
  /** Arrival position up to which everything has been read (null: nothing yet). */
  readUpTo: bigint | null;
  /**
   * The highest sequence (`ChannelMarks.seq`) a tick has loaded: every position up to it was
   * handed out, so a later `seq` below it went back, and a hold on positions up to it that no
   * tick saw then was not placed by a reservation (null: none loaded yet, or a state of before).
   */
  seqSeen: bigint | null;
  outbox: Outbox;
  /** When (wall ms) this tick's predecessors first saw each hold still present. */
  holdsSeen: Record<string, number>;
  broken: BrokenHold[];
}

export const EMPTY_TICK_STATE: TickState = Object.freeze({
  planner: EMPTY_PLANNER_STATE,
  readUpTo: null,
  seqSeen: null,
  outbox: EMPTY_OUTBOX,
  holdsSeen: {},
  broken: [],
});

/**
 * The size of a stored tick state: a state larger than one page continues in page items (each
 * far below DynamoDB's 400 KB item limit), all written in one transaction; a store refuses a
 * state of more than {@link MAX_STATE_PAGES} pages.
 */
export const STATE_PAGE_BYTES = 256 * 1024;
export const MAX_STATE_PAGES = 12;
export const MAX_STATE_BYTES = STATE_PAGE_BYTES * MAX_STATE_PAGES;

export interface ChannelRecord {
  /** Bumped by every record; 0 for a channel never recorded. */
  version: number;
  state: TickState;
  /** Until when (wall ms) the recording tick owns its outbox. */
  leaseUntil: number | null;
  /** Identifies the write that made this version: a tick recognises its own after a lost answer. */
  recordId: string | null;
}

export interface ChannelSnapshot {
  channel: string;
  marks: ChannelMarks;
  record: ChannelRecord;
  /** Size of the encoded tick state as stored. */
  stateBytes: number;
  /** Items the tick state takes beyond its own (a large state continues in pages). */
  pages: number;
}

export type RecordOutcome = "recorded" | "conflict";

/** A channel on the due index, and since when (pipeline clock) it is due. */
export interface DueChannel {
  channel: string;
  dueAt: number;
}

/** What the tick needs of the channels table. */
export interface ChannelStore {
  /** Both records of a channel, read consistently. */
  load(channel: string): Promise<ChannelSnapshot>;
  /**
   * Writes the next tick state in one conditional write on the version `snapshot` read, with a
   * lease on its outbox. "conflict" when another tick recorded first.
   */
  record(
    snapshot: ChannelSnapshot,
    next: { state: TickState; encoded: Uint8Array; leaseUntil: number; recordId: string },
  ): Promise<RecordOutcome>;
  /**
   * After delivery: marks `version` delivered and sets when the channel is next due (null: off the
   * due index), unless a writer reserved or released (or an erasure asked for a linker reset)
   * since `snapshot` was read, in which case the channel stays due (at the earlier of its due
   * time and `now`).
   */
  finish(
    snapshot: ChannelSnapshot,
    version: number,
    nextDueAt: number | null,
    now: number,
  ): Promise<void>;
  /**
   * An erasure's request: raises the marks' `linkerReset` to `requestedAt` (wall ms), or past it
   * when it is there already, so the next tick drops the reply linker's window (which holds
   * hashes of the erased person's words and names), and marks the channel due at `now` (keeping
   * an earlier due time), as a writer's release does. Writes the marks' reset and due attributes
   * only.
   */
  requestLinkerReset(channel: string, requestedAt: number, now: number): Promise<void>;
  /** Removes the named holds from the channel's marks: their writers are presumed gone. */
  breakHolds(channel: string, holds: readonly string[]): Promise<void>;
  /**
   * Sets the channel's sequence to `to` when it is missing or below it (a writer set it back),
   * so that no position up to `to` is handed out again; leaves a higher one alone.
   */
  advanceSequence(channel: string, to: bigint): Promise<void>;
  /**
   * Channels due at or before `now`, the longest waiting first across all shards (or across the
   * shards of `share` only, for one worker of a fanned-out tick).
   */
  dueChannels(now: number, share?: TickShare): AsyncIterable<DueChannel>;
  /**
   * Claims `share` for `owner` until `until` (wall ms) unless another owner's claim is still
   * running at `wallNow`: a share is worked by one worker at a time. True when claimed.
   */
  claimShare(share: TickShare, owner: string, until: number, wallNow: number): Promise<boolean>;
  /** Ends `owner`'s claim of `share` (nothing when it is no longer the owner). */
  releaseShare(share: TickShare, owner: string): Promise<void>;
  /** The earliest due time of any channel, or null when none is due. */
  earliestDue(): Promise<number | null>;
  /**
   * Operator reset: forgets what was read and emitted, so that the next tick re-reads the whole
   * channel and delivers its segments again with the same ids; a tick running meanwhile cannot
   * record over it.
   */
  reset(channel: string, now: number): Promise<void>;
}

/** Whether an outbox holds anything to deliver or report. */
export function hasWork(outbox: Outbox): boolean {
  return outbox.segments.length > 0 || outbox.dropped.length > 0 || outbox.late > 0;
}

/** The hold an attribute of a marks record describes, or undefined for another attribute. */
export function parseHold(name: string, first: bigint): Hold | undefined {
  const count = holdCount(name);
  return count === undefined ? undefined : { name, first, count };
}
