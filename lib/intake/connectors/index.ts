/**
 * Live chat connectors. The Slack Events API receiver's protocol (signature, URL verification,
 * message events as ingest lines, rendered as the export reader renders them), the Telegram
 * webhook's (secret token, updates as ingest lines in the export reader's ids) and the claims that
 * keep a platform's retry from being ingested twice.
 */
export {
  createClaimsTable,
  DynamoDbEventClaims,
  type EventClaims,
  MemoryEventClaims,
  PENDING_LEASE_SECONDS,
} from "./claims.js";
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
export { parseSlackEnvelope, slackEventLines } from "./slack-events.js";
export { type SlackReceiverOptions, slackReceiver } from "./slack-receiver.js";
export { signSlackRequest, verifySlackRequest } from "./slack-signature.js";
export { MAX_LOOKUPS_PER_EVENT, SlackUserNames, slackUserIds } from "./slack-users.js";
export { parseTelegramUpdate, telegramUpdateLines, verifyTelegramRequest } from "./telegram.js";
export { telegramReceiver } from "./telegram-receiver.js";
