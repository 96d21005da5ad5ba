/**
 * Live chat connectors. The Slack Events API receiver's protocol (signature, URL verification,
 * message events as ingest lines, rendered as the export reader renders them), the Telegram
 * webhook's (secret token, updates as ingest lines in the export reader's ids), the claims that
 * keep a platform's retry from being ingested twice, and the ask endpoints (Slack's slash
 * command, Discord's interactions, Telegram's `/ask`), which verify a question and hand it on.
 */
export {
  type AskMetric,
  AskRateLimit,
  type AskReceiverOptions,
  type AskRequest,
} from "./ask.js";
export { askWords } from "./ask-words.js";
export {
  createClaimsTable,
  DynamoDbEventClaims,
  type EventClaims,
  MemoryEventClaims,
  PENDING_LEASE_SECONDS,
} from "./claims.js";
export { discordAskReceiver } from "./discord-ask.js";
export { discordPublicKey, verifyDiscordRequest } from "./discord-signature.js";
export { ConnectorError } from "./errors.js";
export type {
  ChatScope,
  ConnectorLog,
  ConnectorMetric,
  HttpRequest,
  HttpResponse,
  IngestLine,
} from "./receive.js";
export { MAX_EVENT_BODY_BYTES } from "./receive.js";
export { slackAskReceiver } from "./slack-ask.js";
export { parseSlackEnvelope, slackEventLines } from "./slack-events.js";
export { type SlackReceiverOptions, slackReceiver } from "./slack-receiver.js";
export { signSlackRequest, verifySlackRequest } from "./slack-signature.js";
export { MAX_LOOKUPS_PER_EVENT, SlackUserNames, slackUserIds } from "./slack-users.js";
export { parseTelegramUpdate, telegramUpdateLines, verifyTelegramRequest } from "./telegram.js";
export { telegramAskReceiver } from "./telegram-ask.js";
export { telegramReceiver } from "./telegram-receiver.js";
