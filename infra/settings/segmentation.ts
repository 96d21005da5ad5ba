/**
 * The segmentation wing's settings: the segmenter's limits, the tick's schedule and fan-out, the
 * due index and the segment queue. Their defaults are the segmenter's own (`SEGMENT_DEFAULTS`),
 * so that the deployed function and a local run agree unless told otherwise; each becomes the
 * variable `readSegmentConfig` reads it from.
 */
import { MAX_CHANNEL_CONCURRENCY, MAX_WORKERS, SEGMENT_DEFAULTS } from "convoseg/pipeline";
import { MAX_DUE_SHARDS } from "convoseg/pipeline/schema";
import { fail, got, LAMBDA_MAX_TIMEOUT_MS, QUEUE_NAME, type Table, wholeMinutes } from "./kinds.js";

/** The segment function's own bound on maxSize and minItems. */
const MAX_SEGMENT_MESSAGES = 100_000;
/** SQS allows 1 KiB to 1 MiB; the tick wants room for a one-message reference of the longest ids. */
const MIN_BODY_BYTES = 16 * 1024;
const MAX_BODY_BYTES = 1024 * 1024;
const FIFO_QUEUE_NAME = /^[A-Za-z0-9_-]{1,71}\.fifo$/;
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;

/**
 * The tick's timeout for a schedule period: the period less a gap (a tenth, at least 10 s) so
 * that a tick ends before the next starts, capped at Lambda's 15 minutes.
 */
export function tickTimeoutMs(scheduleMs: number): number {
  return Math.min(LAMBDA_MAX_TIMEOUT_MS, scheduleMs - Math.max(10_000, scheduleMs / 10));
}

export const segmentation = <V, P>(table: Table<V, P>) =>
  table
    /** Most messages in one segment. */
    .integer("maxSize", {
      default: SEGMENT_DEFAULTS.MAX_SIZE,
      min: 1,
      max: MAX_SEGMENT_MESSAGES,
      env: { segment: "MAX_SIZE" },
    })
    /** Fewest messages a segment needs; smaller pieces are dropped and counted. */
    .integer("minItems", {
      default: SEGMENT_DEFAULTS.MIN_ITEMS,
      min: 1,
      max: MAX_SEGMENT_MESSAGES,
      env: { segment: "MIN_ITEMS" },
      check: (v) => {
        if (v.minItems > v.maxSize)
          fail(`must not exceed maxSize (${v.maxSize}) ${got(v.minItems)}`);
      },
    })
    /**
     * How a channel's messages outside threads become segments: `linked`, one stream per
     * conversation of the reply linker (docs/conversations.md); `contiguous`, the timeline cut
     * at silences and sizes, as before the linker.
     */
    .choice("conversations", {
      options: ["linked", "contiguous"],
      default: SEGMENT_DEFAULTS.CONVERSATIONS,
      env: { segment: "CONVERSATIONS" },
    })
    /**
     * Ask the extraction's model about the links the reply linker is least sure of, a batch per
     * channel per tick, within extraction's token budgets (docs/conversations.md#asking-a-model).
     * The tick then reads the extraction's model settings and may call its model. Off: the
     * linker decides alone.
     */
    .flag("askLinks", {
      default: (SEGMENT_DEFAULTS.ASK_LINKS as string) === "true",
      env: { segment: "ASK_LINKS" },
    })
    /** Silence that ends a conversation. */
    .duration("settle", { default: SEGMENT_DEFAULTS.SETTLE, env: { segment: "SETTLE" } })
    /** Extra quiet time before a trailing conversation counts as settled: ingestion reordering. */
    .duration("grace", { default: SEGMENT_DEFAULTS.GRACE, env: { segment: "GRACE" } })
    /** How often the segmentation tick runs: whole minutes, 1m to 60m. */
    .duration("schedule", { default: "5m", check: (v) => wholeMinutes(v.schedule) })
    /** A tick takes no new channel when less than this is left of its timeout. */
    .duration("budgetMargin", {
      default: SEGMENT_DEFAULTS.BUDGET_MARGIN,
      env: { segment: "BUDGET_MARGIN" },
      check: ({ budgetMargin: ms, schedule }) => {
        const timeout = tickTimeoutMs(schedule);
        if (ms >= timeout) fail(`must be less than the tick timeout (${timeout} ms) ${got(ms)}`);
      },
    })
    /** The segment queue: `fifo` keeps each channel's segments in order. */
    .choice("queueType", {
      options: ["fifo", "standard"],
      default: "fifo",
      env: {
        segment: { variable: "SEGMENT_QUEUE_FIFO", value: (type) => String(type === "fifo") },
      },
    })
    /** Largest segment message body, and the segment queue's MaximumMessageSize. */
    .integer("maxBodyBytes", {
      default: SEGMENT_DEFAULTS.MAX_BODY_BYTES,
      min: MIN_BODY_BYTES,
      max: MAX_BODY_BYTES,
      env: { segment: "MAX_BODY_BYTES" },
    })
    /**
     * Shards of the channels table's due index, 1 to 1000. Each shard is one GSI partition (about
     * 1,000 due marks/s); raise it only for more marks than that per shard. Users' own
     * `IngestClient`s must be given the same count (`dueShards`).
     */
    .integer("dueShards", {
      default: SEGMENT_DEFAULTS.DUE_SHARDS,
      min: 1,
      max: MAX_DUE_SHARDS,
      env: { segment: "DUE_SHARDS", ingest: "DUE_SHARDS" },
    })
    /**
     * The count before a change of dueShards that shrinks it: the tick also reads the shards only
     * it had, until the `DueItemsInOldShards` metric reads 0 with every writer on the new count;
     * then remove this setting. Unset: nothing to migrate.
     */
    .optionalInteger("previousDueShards", {
      min: 1,
      max: MAX_DUE_SHARDS,
      env: { segment: "PREVIOUS_DUE_SHARDS" },
    })
    /**
     * Workers a tick fans out to, 1 to dueShards. With more than one, the scheduled function
     * becomes a dispatcher that starts a worker function (reserved concurrency = workers) per
     * share of the due index; see the scaling docs. 1: the scheduled function does the whole tick.
     */
    .integer("workers", {
      default: SEGMENT_DEFAULTS.WORKERS,
      min: 1,
      max: MAX_WORKERS,
      env: { segment: "WORKERS" },
      check: ({ workers: n, dueShards }) => {
        if (n > dueShards) {
          fail(
            `must not exceed dueShards (${dueShards}): each worker owns at least one shard ${got(n)}`,
          );
        }
      },
    })
    /** Channels one tick (or each worker) processes at once, 1 to 64. */
    .integer("channelConcurrency", {
      default: SEGMENT_DEFAULTS.CHANNEL_CONCURRENCY,
      min: 1,
      max: MAX_CHANNEL_CONCURRENCY,
      env: { segment: "CHANNEL_CONCURRENCY" },
    })
    /** The segment queue's physical name. Unset: generated by CloudFormation. */
    .text("segmentQueueName", {
      rule: ({ queueType }) =>
        queueType === "fifo"
          ? {
              pattern: FIFO_QUEUE_NAME,
              rule: "1-71 letters, digits, _ - and .fifo (queueType is fifo)",
            }
          : { pattern: QUEUE_NAME, rule: "1-71 letters, digits, _ - (queueType is standard)" },
    })
    /**
     * Role ARNs besides the tick's (and the ingestion and extraction functions', which ask for
     * re-extractions) that may send to the segment queue, for operators who redrive its
     * dead-letter queue. Unset: only the tick sends.
     */
    .roleArns("segmentQueueSenders", { pattern: ROLE_ARN });
