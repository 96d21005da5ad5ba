import { parseDuration } from "../duration.js";
import { DEFAULT_MAX_SIZE, DEFAULT_MIN_ITEMS, DEFAULT_SETTLE_MS } from "../segmenter/index.js";
import type { TickSettings } from "./tick.js";

/** Everything the segmentation function is configured with, read from its environment. */
export interface SegmentFunctionConfig {
  messagesTable: string;
  channelsTable: string;
  queueUrl: string;
  fifo: boolean;
  maxBodyBytes: number;
  /** Stop taking channels when less than this remains of the invocation. */
  budgetMarginMs: number;
  settings: TickSettings;
}

/** The defaults, in the form the environment carries them (also what the CDK stack sets). */
export const SEGMENT_DEFAULTS = {
  SEGMENT_QUEUE_FIFO: "true",
  MAX_SIZE: String(DEFAULT_MAX_SIZE),
  SETTLE: `${DEFAULT_SETTLE_MS}`,
  MIN_ITEMS: String(DEFAULT_MIN_ITEMS),
  // At least the read lag plus ordinary reordering between ingestion writers.
  GRACE: "1m",
  READ_LAG: "10s",
  MAX_ARRIVALS_PER_CHANNEL: "5000",
  LEASE: "15m",
  CHANNEL_CONCURRENCY: "8",
  MAX_BODY_BYTES: String(256 * 1024),
  BUDGET_MARGIN: "20s",
} as const;

/**
 * Reads and validates the configuration at cold start, so that a bad setting fails the first
 * invocation with the variable's name instead of misbehaving later.
 */
export function readSegmentConfig(env: Record<string, string | undefined>): SegmentFunctionConfig {
  const value = (
    name: keyof typeof SEGMENT_DEFAULTS | "MESSAGES_TABLE" | "CHANNELS_TABLE" | "SEGMENT_QUEUE_URL",
  ) => {
    const text = env[name] ?? (SEGMENT_DEFAULTS as Record<string, string>)[name];
    if (!text) throw new Error(`segment: environment variable ${name} must be set`);
    return text;
  };
  const integer = (name: keyof typeof SEGMENT_DEFAULTS, min: number) => {
    const text = value(name);
    const n = Number(text);
    if (!/^\d+$/.test(text) || n < min || !Number.isSafeInteger(n)) {
      throw new Error(
        `segment: ${name} must be an integer >= ${min} (got ${JSON.stringify(text)})`,
      );
    }
    return n;
  };
  const duration = (name: keyof typeof SEGMENT_DEFAULTS) => {
    try {
      return parseDuration(value(name), name);
    } catch (error) {
      throw new Error(`segment: ${(error as Error).message}`);
    }
  };
  const fifo = value("SEGMENT_QUEUE_FIFO");
  if (fifo !== "true" && fifo !== "false") {
    throw new Error(
      `segment: SEGMENT_QUEUE_FIFO must be true or false (got ${JSON.stringify(fifo)})`,
    );
  }
  return {
    messagesTable: value("MESSAGES_TABLE"),
    channelsTable: value("CHANNELS_TABLE"),
    queueUrl: value("SEGMENT_QUEUE_URL"),
    fifo: fifo === "true",
    maxBodyBytes: integer("MAX_BODY_BYTES", 1024),
    budgetMarginMs: duration("BUDGET_MARGIN"),
    settings: {
      maxSize: integer("MAX_SIZE", 1),
      settle: duration("SETTLE"),
      minItems: integer("MIN_ITEMS", 1),
      grace: duration("GRACE"),
      readLagMs: duration("READ_LAG"),
      maxArrivalsPerChannel: integer("MAX_ARRIVALS_PER_CHANNEL", 1),
      leaseMs: duration("LEASE"),
      channelConcurrency: integer("CHANNEL_CONCURRENCY", 1),
    },
  };
}
