/**
 * The poller function's configuration, read from its environment at cold start: a bad value
 * fails the first invocation with a `DiscordConfigError` naming the variable.
 */
import { parseTimestamp } from "../../../history/messages/index.js";
import { DiscordConfigError } from "./errors.js";
import { DEFAULT_REREAD_WINDOW } from "./poller.js";
import { DISCORD_EPOCH_MS, isSnowflake } from "./snowflake.js";

export const MAX_REREAD_WINDOW = 1000;
/** Most channels one poller takes: 1,000 channels' reads fill a 5-minute tick at 50/s. */
export const MAX_DISCORD_CHANNELS = 1000;

export interface DiscordFunctionConfig {
  channels: string[];
  /** The Secrets Manager secret (name or ARN) holding the bot token. */
  tokenSecret: string;
  cursorsTable: string;
  ingestQueueUrl: string;
  /** The history store the re-read compares against (read only). */
  messagesTable: string;
  rereadWindow: number;
  backfillFrom?: number;
  threads: boolean;
  /** Stop this long before the invocation's timeout. */
  marginMs: number;
  /** The API's base URL: only tests and the benchmark change it. */
  apiUrl?: string;
}

export function readDiscordConfig(env: Record<string, string | undefined>): DiscordFunctionConfig {
  const required = (name: string): string => {
    const value = env[name];
    if (value === undefined || value.trim() === "") {
      throw new DiscordConfigError(name, "must be set (not blank)");
    }
    return value;
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const text = env[name] ?? String(fallback);
    const n = Number(text);
    if (!/^\d+$/.test(text) || n < min || n > max) {
      throw new DiscordConfigError(
        name,
        `must be an integer from ${min} to ${max} (got ${JSON.stringify(text)})`,
      );
    }
    return n;
  };
  const channels = required("DISCORD_CHANNELS")
    .split(",")
    .map((id) => id.trim())
    .filter((id) => id !== "");
  const bad = channels.find((id) => !isSnowflake(id));
  if (bad !== undefined) {
    throw new DiscordConfigError(
      "DISCORD_CHANNELS",
      `not a channel id (snowflake): ${JSON.stringify(bad)}`,
    );
  }
  if (channels.length === 0 || channels.length > MAX_DISCORD_CHANNELS) {
    throw new DiscordConfigError(
      "DISCORD_CHANNELS",
      `must list 1 to ${MAX_DISCORD_CHANNELS} channel ids (got ${channels.length})`,
    );
  }
  const config: DiscordFunctionConfig = {
    channels,
    tokenSecret: required("DISCORD_TOKEN_SECRET"),
    cursorsTable: required("CURSORS_TABLE"),
    ingestQueueUrl: required("INGEST_QUEUE_URL"),
    messagesTable: required("MESSAGES_TABLE"),
    rereadWindow: integer("REREAD_WINDOW", DEFAULT_REREAD_WINDOW, 0, MAX_REREAD_WINDOW),
    threads: (env.DISCORD_THREADS ?? "true") !== "false",
    marginMs: integer("DEADLINE_MARGIN_MS", 20_000, 0, 600_000),
  };
  if (env.BACKFILL_FROM) {
    let ms: number;
    try {
      ms = parseTimestamp(env.BACKFILL_FROM);
    } catch {
      throw new DiscordConfigError(
        "BACKFILL_FROM",
        `must be an ISO-8601 date-time with a zone (got ${JSON.stringify(env.BACKFILL_FROM)})`,
      );
    }
    if (ms < DISCORD_EPOCH_MS) {
      throw new DiscordConfigError(
        "BACKFILL_FROM",
        `must be on or after 2015-01-01, Discord's epoch (got ${JSON.stringify(env.BACKFILL_FROM)})`,
      );
    }
    config.backfillFrom = ms;
  }
  if (env.DISCORD_API_URL) config.apiUrl = env.DISCORD_API_URL;
  return config;
}
