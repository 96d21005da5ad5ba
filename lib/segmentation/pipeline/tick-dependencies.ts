/**
 * What the tick runs on: where it reads messages and sends segments, the channel store, its
 * settings, metrics and logger, and its two clocks. The Lambda handlers, the local run and the
 * benchmarks wire it (`./wiring.ts`); tests pass memory stores and fakes.
 */
import type { Arrival, InferredReply } from "../../history/dynamodb/index.js";
import type { Message } from "../../history/index.js";
import type { LinkAdvisor } from "../linker/index.js";
import type { BodyOptions } from "./delivery.js";
import type { ChannelStore } from "./store/channel-state.js";
import type { PipelineConfig, SegmentDelivery } from "./types.js";

/** Where the tick reads messages: the history store (either backend) satisfies it. */
export interface MessageSource {
  /**
   * Positions, ids and timestamps of what arrived after `after`, up to `upTo`, in position order;
   * with `links`, each one's `thread` and `replyTo` too (an extra read: docs/pipeline.md); with
   * `content`, also what the reply linker reads (author, kind, text: the same read, more bytes).
   */
  arrivalsAfter(
    channel: string,
    after: bigint | undefined,
    options?: { upTo?: bigint; links?: boolean; content?: boolean },
  ): AsyncIterable<Arrival>;
  /**
   * The stored messages with these ids, in the order of `ids`; missing ones left out, deleted
   * ones flagged `deleted`.
   */
  getMessages(channel: string, ids: readonly string[]): Promise<Message[]>;
  /**
   * Sets the reply linker's inferred parent (`inferredReplyTo`) on each stored message; a message
   * no longer stored is left alone. Idempotent.
   */
  recordInferredReplies(channel: string, links: readonly InferredReply[]): Promise<void>;
}

/** Where closed segments go (SQS in production), in order, each with its message body. */
interface SegmentSink {
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
  | "HoldsRenewed"
  | "SequenceRewound"
  | "MissingMessages"
  | "DeletedBeforeDelivery"
  | "ChannelStateBytes"
  | "SharesBusy"
  | "WorkersInvoked"
  | "WorkerInvokeErrors"
  | "ConversationsMerged"
  | "LinksAsked"
  | "LinksAdvised"
  | "LinkAdviceFailures";

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

export interface TickDependencies {
  messages: MessageSource;
  channels: ChannelStore;
  sink: SegmentSink;
  bodies: BodyOptions;
  metrics: PipelineMetrics;
  logger: PipelineLogger;
  settings: TickSettings;
  /**
   * Asked about the links the reply linker is least sure of (`linked` mode), before they are
   * decided for good; absent (the default), the linker's model decides alone.
   */
  advisor?: LinkAdvisor;
  /** The pipeline clock (epoch ms): decides what has settled, and due times. */
  now: () => number;
  /** The wall clock (epoch ms): leases and how long holds have been seen. */
  wallNow: () => number;
}
