/**
 * The Discord poller (issue 23): a REST client under Discord's rate limits, the mapping of
 * message objects to ingestion lines, per-source cursors that only move forward, and a run that
 * reads every configured channel and its threads, and re-reads a recent window for edits and
 * deletions.
 */
export { type Clock, simulatedClock, systemClock } from "./clock.js";
export {
  type DiscordFunctionConfig,
  MAX_DISCORD_CHANNELS,
  MAX_REREAD_WINDOW,
  readDiscordConfig,
} from "./config.js";
export {
  type CursorFields,
  type CursorState,
  type CursorStore,
  DynamoDbCursorStore,
  MemoryCursorStore,
} from "./cursors.js";
export {
  DiscordAuthError,
  DiscordConfigError,
  DiscordDeadlineError,
  DiscordError,
  DiscordHttpError,
  DiscordRateLimitError,
} from "./errors.js";
export { chatMessage, type Destination, type DiscordMessage, messageText } from "./map.js";
export {
  DEFAULT_REREAD_WINDOW,
  type PollDeps,
  type PollSettings,
  type PollSummary,
  pollDiscord,
} from "./poller.js";
export { queueSink } from "./queue-sink.js";
export { DISCORD_API, DiscordRest, type DiscordRestOptions, type RestStats } from "./rest.js";
export {
  compareSnowflakes,
  DISCORD_EPOCH_MS,
  isSnowflake,
  snowflakeFromTime,
  timeOfSnowflake,
} from "./snowflake.js";
export { type MessageSink, PAGE_LIMIT, type StoredMessages } from "./source.js";
