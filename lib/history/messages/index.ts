/**
 * The chat message as convoseg's inputs carry it, with the edits and deletions that may follow.
 * JSON lines and ingestion batches, and their validation; and the platform's own link to a message
 * (`messagePermalink`: Slack's, Discord's, Telegram's). Its order is `compareRefs` of `lib/base/identity`, and its timestamp
 * window is there too.
 */
export { InvalidMessageError } from "../index.js";
export {
  type ChatMessage,
  type ChatOperation,
  DEFAULT_CHANNEL,
  parseChatMessage,
  parseChatOperation,
  parseTimestamp,
} from "./chat-message.js";
export { messagePermalink } from "./permalink.js";
