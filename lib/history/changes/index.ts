/**
 * Edits, deletions and authors. The `Editor` that applies a change to a stored message (convoseg's
 * addition to the history contract), its outcomes and errors, the bounds of how long a change of
 * a message not stored is held, the author index an erasure
 * pages through to find a person's messages, and the channel names an erasure takes off.
 */
export {
  type AuthoredMessage,
  type AuthorIndex,
  type AuthorQuery,
  type AuthorRef,
  authorMatches,
  mentions,
} from "./authors.js";
export {
  ChangeError,
  type ChangeStatus,
  DEFAULT_CHANGE_HOLD_HOURS,
  type Editor,
  MAX_CHANGE_HOLD_HOURS,
  type MessageChange,
} from "./changes.js";
export type { ChannelNames } from "./channel-names.js";
