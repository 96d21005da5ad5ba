/**
 * The message store. The history contract (a port of the Go history package,
 * `docs/specs/history.md`) and its in-memory reference. The DynamoDB backend is `./dynamodb/`,
 * edits, deletions and authors `./changes/`, arrival positions `./positions/`, the messages
 * table's schema `./schema/`.
 */
export {
  type ConversationId,
  newConversationId,
  validateConversationId,
} from "./conversation-id.js";
export {
  describeError,
  findCause,
  HistoryError,
  InvalidConversationIdError,
  InvalidMessageError,
  InvalidWriteOutcomeError,
  MessageTooLargeError,
  NilStoreError,
} from "./errors.js";
export { MemoryStore } from "./memory-store.js";
export {
  cloneMessage,
  copyPlatformFields,
  kindOf,
  MESSAGE_KINDS,
  type Message,
  type MessageKind,
  type Metadata,
  messageText,
  type Part,
  PLATFORM_FIELDS,
  type PlatformFields,
  type Role,
  snapshotBatch,
  textMessage,
  validateMessage,
} from "./message.js";
export {
  type ExistingMessage,
  NOTHING_WRITTEN,
  validateWriteOutcome,
  WriteError,
  type WriteOutcome,
} from "./outcome.js";
export { Sequence } from "./sequence.js";
export type {
  CallOptions,
  /** @public The history contract's parts, though convoseg uses them only through `Store`. */
  Clearer,
  Lister,
  /** @public */
  Reader,
  ReadWriter,
  Store,
  Writer,
} from "./store.js";
