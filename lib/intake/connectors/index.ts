/**
 * Live chat connectors: the Slack Events API receiver's protocol (signature, URL verification,
 * message events as ingest lines, rendered as the export reader renders them), the Telegram
 * webhook's (secret token, updates as ingest lines in the export reader's ids) and the claims
 * that keep a platform's retry from being ingested twice.
 */
export {
  CLAIM_TTL_SECONDS,
  type ClaimOutcome,
  createClaimsTable,
  DynamoDbEventClaims,
  type EventClaims,
  MemoryEventClaims,
  PENDING_LEASE_SECONDS,
} from "./claims.js";
export { ConnectorError, type ConnectorErrorCode } from "./errors.js";
export {
  type ConnectorLog,
  type ConnectorMetric,
  type HttpRequest,
  type HttpResponse,
  header,
  type IngestLine,
  type RequestHeaders,
} from "./receive.js";
export {
  parseSlackEnvelope,
  type SlackEnvelope,
  type SlackEvent,
  slackEventLines,
} from "./slack-events.js";
export { type SlackReceiverOptions, slackReceiver } from "./slack-receiver.js";
export {
  SLACK_MAX_SKEW_SECONDS,
  SLACK_SIGNATURE_HEADER,
  SLACK_TIMESTAMP_HEADER,
  signSlackRequest,
  type VerifyOptions,
  verifySlackRequest,
} from "./slack-signature.js";
export {
  SlackUserNames,
  type SlackUserNamesOptions,
  slackUserIds,
} from "./slack-users.js";
export {
  parseTelegramUpdate,
  TELEGRAM_TOKEN_HEADER,
  type TelegramMessage,
  type TelegramUpdate,
  telegramUpdateLines,
  verifyTelegramRequest,
} from "./telegram.js";
export { type TelegramReceiverOptions, telegramReceiver } from "./telegram-receiver.js";
