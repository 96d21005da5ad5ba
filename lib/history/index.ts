/**
 * The history module: the message store contract (a port of the Go history package,
 * `docs/specs/history.md`), its in-memory reference and DynamoDB backends, and arrival positions.
 * The messages table's schema is `./schema/`; the chat-model middleware is `lib/history/chat-model`.
 */
export {
  type AuthoredMessage,
  type AuthorIndex,
  type AuthorMessagesOptions,
  type AuthorPage,
  type AuthorQuery,
  type AuthorRef,
  authorMatches,
} from "./authors.js";
export {
  ChangeError,
  type ChangeOptions,
  type ChangeResult,
  type ChangeStatus,
  type Editor,
  type MessageChange,
} from "./changes.js";
export {
  type ConversationId,
  newConversationId,
  validateConversationId,
} from "./conversation-id.js";
export { latestChannelName } from "./dynamodb/channel-names.js";
export { storageProblem } from "./dynamodb/schema.js";
export {
  type Arrival,
  DynamoDbStore,
  type DynamoDbStoreOptions,
  type PositionedMessage,
} from "./dynamodb/store.js";
export { createMessagesTable } from "./dynamodb/table.js";
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
export { MemoryStore, type MemoryStoreOptions } from "./memory-store.js";
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
  type PlatformField,
  type PlatformFields,
  platformFieldsOf,
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
export {
  LeaseReleaseError,
  type PositionAllocator,
  type PositionLease,
  SequenceAllocator,
} from "./positions.js";
export { Sequence } from "./sequence.js";
export type {
  CallOptions,
  Clearer,
  Lister,
  Reader,
  ReadWriter,
  Store,
  Writer,
} from "./store.js";
