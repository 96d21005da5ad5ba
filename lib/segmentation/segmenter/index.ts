/**
 * The conversation segmenter (`docs/specs/segmenter.md`). Splits a timestamped item stream into
 * closed conversation segments. Pure and deterministic.
 */
export { openConversationStart } from "./open-conversation.js";
export {
  ConversationSegmenter,
  DEFAULT_MAX_SIZE,
  DEFAULT_MIN_ITEMS,
  DEFAULT_SETTLE_MS,
  foldUndersizedLast,
  /** @public Part of this entry point's API for callers outside the repository. */
  type Instant,
  type ReplyLinks,
  /** @public */
  type SegmenterOptions,
} from "./segmenter.js";
