/**
 * A chat message as convoseg's inputs carry it (JSON lines, ingestion batches), the edits and
 * deletions that may follow it, and their validation. Its order is `compareRefs` of `lib/base/identity`, and its timestamp window is there too.
 */
export { InvalidMessageError } from "../index.js";
export {
  type ChatDeletion,
  type ChatEdit,
  type ChatMessage,
  type ChatOperation,
  DEFAULT_CHANNEL,
  parseChatMessage,
  parseChatOperation,
  parseTimestamp,
} from "./chat-message.js";
