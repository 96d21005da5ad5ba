/**
 * Identity and order of messages, shared by every other module and importing none. The one product
 * order (platform timestamp, then message id in UTF-8 byte order), the rules that make a string a
 * usable conversation or message id, and the timestamps convoseg accepts. Validators return a
 * problem description (or undefined) rather than throw, so that each module reports it in its own
 * error family.
 */
export {
  conversationIdProblem,
  loneSurrogateAt,
  MAX_CONVERSATION_ID_BYTES,
  MAX_MESSAGE_ID_BYTES,
  messageIdProblem,
} from "./ids.js";
export { compareIds, compareRefs, type MessageRef } from "./order.js";
export {
  channelLabel,
  channelPlatform,
  isPrivateChat,
  PLATFORM_CHANNEL_SHAPES,
  PLATFORM_PLACE_SHAPES,
  permalinkPlatform,
  type ShapedPlatform,
} from "./platforms.js";
export {
  futureTimestampProblem,
  isAcceptedTimestamp,
  MAX_DATE_MS,
  MAX_TIMESTAMP_MS,
} from "./timestamp.js";
