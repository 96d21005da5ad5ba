/**
 * The Discord poller: reads channels and threads over Discord's REST API into ingestion lines.
 * A REST client under Discord's rate limits, the mapping of message objects to ingestion lines,
 * per-source cursors that only move forward, and a run that reads every configured channel and
 * its threads, and re-reads a recent window for edits and deletions.
 */
export { simulatedClock, systemClock } from "./clock.js";
export { MAX_DISCORD_CHANNELS, MAX_REREAD_WINDOW, readDiscordConfig } from "./config.js";
export { DynamoDbCursorStore, MemoryCursorStore } from "./cursors.js";
export {
  DiscordAuthError,
  DiscordConfigError,
  DiscordDeadlineError,
  DiscordError,
  DiscordHttpError,
  DiscordRateLimitError,
} from "./errors.js";
export { chatMessage, type DiscordMessage } from "./map.js";
export {
  DEFAULT_REREAD_WINDOW,
  type PollSettings,
  type PollSummary,
  pollDiscord,
} from "./poller.js";
export { queueSink } from "./queue-sink.js";
export { DiscordRest } from "./rest.js";
export { compareSnowflakes, snowflakeFromTime, timeOfSnowflake } from "./snowflake.js";
