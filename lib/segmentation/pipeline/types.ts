/**
 * The vocabulary of the segmentation pipeline, shared by the pure planner, the channel state
 * store, delivery and the tick.
 */
import type { MessageRef } from "../../base/identity/index.js";

export type { MessageRef };

export type ConversationMode = "linked" | "contiguous";

export interface PipelineConfig {
  /** Segmenter options (messages, ms, messages). */
  maxSize: number;
  settle: number;
  minItems: number;
  /** Extra quiet time, ms, before a trailing conversation counts as settled: absorbs ingestion lag. */
  grace: number;
  /**
   * How a channel's messages outside threads become streams: `contiguous`, its timeline cut at
   * silences and sizes; `linked`, one stream per conversation of the reply linker. Absent:
   * `contiguous`, as before the linker existed.
   */
  conversations?: ConversationMode;
  /**
   * The bytes of message ids a segment may list (what its reference form can carry): a segment
   * of very long ids is cut before it reaches `maxSize`. Absent: no such bound.
   */
  idBytesPerSegment?: number;
}

/** A segment decided final, ready to deliver. */
export interface PlannedSegment {
  /** Deterministic: derived from the channel and the first message (and lateness). */
  segmentId: string;
  channel: string;
  /** In channel order. */
  messages: MessageRef[];
  /** Messages that arrived after what they belong to had been emitted. */
  late: boolean;
  /** For a late segment: the emitted segment its messages belong after (null when unknown). */
  belongsAfter: string | null;
  /**
   * The root message id of the thread whose replies these are (`./streams.ts`); absent for the
   * channel's own stream.
   */
  thread?: string;
  /**
   * In `linked` mode, the conversation (its first message's id) whose messages these are: the
   * reply linker's, for a channel's messages outside threads (`../linker/`).
   */
  conversation?: string;
}

/** A segment and its queue body. */
export interface SegmentDelivery {
  segment: PlannedSegment;
  body: string;
}

/** An emitted segment remembered so that late messages can name the segment they belong after. */
export interface EmittedBound {
  segmentId: string;
  first: MessageRef;
}

/**
 * A message as the planner carves it: its ref, and the id of the message it answers when known,
 * for the segmenter's reply-aware size cut (docs/segmenter.md). Only tails keep `replyTo`.
 */
export interface LinkedRef extends MessageRef {
  replyTo?: string;
}

/** The planner's view of a channel between ticks. */
export interface PlannerState {
  /** Messages seen but not yet in a final segment, in channel order. */
  tail: LinkedRef[];
  /** The last message of the last final piece (emitted or dropped): what is done. */
  watermark: MessageRef | null;
  /** The most recent emitted segments, oldest first (bounded). */
  recent: EmittedBound[];
}

export const EMPTY_PLANNER_STATE: PlannerState = Object.freeze({
  tail: [],
  watermark: null,
  recent: [],
});

/**
 * One worker's part of a fanned-out tick: share `index` of `of` owns the due index shards whose
 * number is `index` modulo `of` (`shareShards`), so the shares partition the index.
 */
export interface TickShare {
  readonly index: number;
  readonly of: number;
}
