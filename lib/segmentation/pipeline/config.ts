import { parseDuration } from "../../base/duration/index.js";
import { DEFAULT_MAX_SIZE, DEFAULT_MIN_ITEMS, DEFAULT_SETTLE_MS } from "../segmenter/index.js";
import { PipelineConfigError } from "./errors.js";
import { DUE_SHARDS, MAX_DUE_SHARDS } from "./schema/due-shards.js";
import type { TickSettings } from "./tick-dependencies.js";

/** Everything the segmentation function is configured with, read from its environment. */
export interface SegmentFunctionConfig {
  messagesTable: string;
  channelsTable: string;
  queueUrl: string;
  fifo: boolean;
  maxBodyBytes: number;
  /** Stop taking channels when less than this remains of the invocation. */
  budgetMarginMs: number;
  /** Shards of the due index (`dueShards`), and while a change migrates, the previous count. */
  dueShards: number;
  previousDueShards: number | null;
  /**
   * Workers a tick fans out to (`WORKERS`): 1 runs the whole tick in the scheduled function;
   * more make it a dispatcher that starts `workerFunction` once per share (`dispatchTick`).
   */
  workers: number;
  /** The worker function's name, set on the dispatcher when `workers` is over 1. */
  workerFunction: string | null;
  /**
   * Ask the extraction's model about the links the reply linker is least sure of (`ASK_LINKS`,
   * docs/conversations.md); the function then reads the extraction's settings too.
   */
  askLinks: boolean;
  settings: TickSettings;
}

/** The defaults, in the form the environment carries them (also what the CDK stack sets). */
export const SEGMENT_DEFAULTS = {
  SEGMENT_QUEUE_FIFO: "true",
  MAX_SIZE: String(DEFAULT_MAX_SIZE),
  SETTLE: `${DEFAULT_SETTLE_MS}`,
  MIN_ITEMS: String(DEFAULT_MIN_ITEMS),
  // Ordinary reordering between ingestion writers of one channel.
  GRACE: "1m",
  MAX_ARRIVALS_PER_CHANNEL: "5000",
  LEASE: "15m",
  HOLD_TIMEOUT: "5m",
  CHANNEL_CONCURRENCY: "8",
  MAX_BODY_BYTES: String(256 * 1024),
  BUDGET_MARGIN: "20s",
  DUE_SHARDS: String(DUE_SHARDS),
  // 0: no previous count, nothing to migrate.
  PREVIOUS_DUE_SHARDS: "0",
  // One invocation does the whole tick, as small deployments need.
  WORKERS: "1",
  // Channels without threads interleave conversations: each gets a stream of its own.
  CONVERSATIONS: "linked",
  // Asking a model about links costs tokens: only where a deployment turns it on.
  ASK_LINKS: "false",
} as const;

/**
 * `DUE_SHARDS` from a function's environment (the ingest function reads it too): every writer of
 * due marks and the tick's reader take the deployment's count from it.
 */
export function readDueShards(env: Record<string, string | undefined>): number {
  const text = env.DUE_SHARDS || SEGMENT_DEFAULTS.DUE_SHARDS;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > MAX_DUE_SHARDS) {
    throw new PipelineConfigError(
      "DUE_SHARDS",
      `must be an integer from 1 to ${MAX_DUE_SHARDS} (got ${JSON.stringify(text)})`,
    );
  }
  return n;
}

/** Upper bounds that keep every setting meaningful (a segment of more messages cannot be sent). */
const MAX_SEGMENT_MESSAGES = 100_000;
/** Channels one tick processes at once (`CHANNEL_CONCURRENCY`). */
export const MAX_CHANNEL_CONCURRENCY = 64;
/** A body must hold the reference form of a one-message segment of the longest ids. */
const MIN_BODY_LIMIT = 16 * 1024;
const MAX_BODY_LIMIT = 1024 * 1024;

/**
 * Reads and validates the configuration at cold start, so that a bad setting fails the first
 * invocation with the variable's name instead of misbehaving later.
 */
export function readSegmentConfig(env: Record<string, string | undefined>): SegmentFunctionConfig {
  const value = (
    name: keyof typeof SEGMENT_DEFAULTS | "MESSAGES_TABLE" | "CHANNELS_TABLE" | "SEGMENT_QUEUE_URL",
  ) => {
    const text = env[name] ?? (SEGMENT_DEFAULTS as Record<string, string>)[name];
    if (!text) throw new PipelineConfigError(name, "must be set (environment variable)");
    // A hand-set " " names no table or queue: refused here, not at the first request.
    if (text.trim() === "") {
      throw new PipelineConfigError(name, `must not be blank (got ${JSON.stringify(text)})`);
    }
    return text;
  };
  const integer = (name: keyof typeof SEGMENT_DEFAULTS, min: number, max: number) => {
    const text = value(name);
    const n = Number(text);
    if (!/^\d+$/.test(text) || n < min || n > max) {
      throw new PipelineConfigError(
        name,
        `must be an integer from ${min} to ${max} (got ${JSON.stringify(text)})`,
      );
    }
    return n;
  };
  const duration = (name: keyof typeof SEGMENT_DEFAULTS) => {
    try {
      return parseDuration(value(name), name);
    } catch (error) {
      throw new PipelineConfigError(name, (error as Error).message.replace(`${name} `, ""));
    }
  };
  const dueShards = readDueShards(env);
  const workers = integer("WORKERS", 1, MAX_DUE_SHARDS);
  if (workers > dueShards) {
    throw new PipelineConfigError(
      "WORKERS",
      `must not exceed DUE_SHARDS (${dueShards}): each worker owns at least one shard (got ${workers})`,
    );
  }
  const workerFunction = env.WORKER_FUNCTION || null;
  if (workers > 1 && workerFunction === null) {
    throw new PipelineConfigError(
      "WORKER_FUNCTION",
      `must be set when WORKERS is over 1 (got ${workers} workers and no function to start)`,
    );
  }
  const fifo = value("SEGMENT_QUEUE_FIFO");
  if (fifo !== "true" && fifo !== "false") {
    throw new PipelineConfigError(
      "SEGMENT_QUEUE_FIFO",
      `must be true or false (got ${JSON.stringify(fifo)})`,
    );
  }
  const maxSize = integer("MAX_SIZE", 1, MAX_SEGMENT_MESSAGES);
  const minItems = integer("MIN_ITEMS", 1, MAX_SEGMENT_MESSAGES);
  if (minItems > maxSize) {
    // No segment cut at the size cap could reach it: nearly every message would be dropped.
    throw new PipelineConfigError(
      "MIN_ITEMS",
      `must not exceed MAX_SIZE (${maxSize}) (got ${minItems})`,
    );
  }
  const askLinks = value("ASK_LINKS");
  if (askLinks !== "true" && askLinks !== "false") {
    throw new PipelineConfigError(
      "ASK_LINKS",
      `must be true or false (got ${JSON.stringify(askLinks)})`,
    );
  }
  const conversations = value("CONVERSATIONS");
  if (conversations !== "linked" && conversations !== "contiguous") {
    throw new PipelineConfigError(
      "CONVERSATIONS",
      `must be linked or contiguous (got ${JSON.stringify(conversations)})`,
    );
  }
  return {
    messagesTable: value("MESSAGES_TABLE"),
    channelsTable: value("CHANNELS_TABLE"),
    queueUrl: value("SEGMENT_QUEUE_URL"),
    fifo: fifo === "true",
    maxBodyBytes: integer("MAX_BODY_BYTES", MIN_BODY_LIMIT, MAX_BODY_LIMIT),
    budgetMarginMs: duration("BUDGET_MARGIN"),
    dueShards,
    previousDueShards: integer("PREVIOUS_DUE_SHARDS", 0, MAX_DUE_SHARDS) || null,
    workers,
    workerFunction,
    askLinks: askLinks === "true",
    settings: {
      maxSize,
      settle: duration("SETTLE"),
      minItems,
      grace: duration("GRACE"),
      maxArrivalsPerChannel: integer("MAX_ARRIVALS_PER_CHANNEL", 1, 100_000),
      leaseMs: duration("LEASE"),
      holdTimeoutMs: duration("HOLD_TIMEOUT"),
      channelConcurrency: integer("CHANNEL_CONCURRENCY", 1, MAX_CHANNEL_CONCURRENCY),
      conversations,
    },
  };
}
