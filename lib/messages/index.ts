/**
 * A chat message as convoseg's inputs carry it (JSON lines, ingestion batches) and its
 * validation. Its order is `compareRefs` of `lib/identity`, and its timestamp window is there too.
 */
export { InvalidMessageError } from "../history/index.js";
export {
  type ChatMessage,
  DEFAULT_CHANNEL,
  parseChatMessage,
  parseTimestamp,
} from "./chat-message.js";
