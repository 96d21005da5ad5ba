/**
 * The history module: the message store contract (a port of the Go history package,
 * `specs/history.md`), its in-memory reference and DynamoDB backends, arrival positions, and the
 * chat-model middleware built on it (`./chat/`).
 */
export {
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  type ChatStreamer,
  CommitError,
  cloneRequest,
  InvalidWindowError,
  Middleware,
  MiddlewareError,
  type MiddlewareStep,
  type ModelCallOptions,
  NilStreamError,
  type ResponseDelta,
  StreamAccumulator,
  SYSTEM_SEPARATOR,
  type ToolDefinition,
  type Usage,
  validateRequest,
  WindowStore,
  WindowTooSmallError,
} from "./chat/index.js";
export {
  type ConversationId,
  newConversationId,
  validateConversationId,
} from "./conversation-id.js";
export {
  BY_POSITION_ATTRIBUTES,
  BY_POSITION_INDEX,
  CONVERSATIONS_INDEX,
  decodePosition,
  encodePosition,
  indexEntry,
  LISTED,
  MAX_MESSAGE_ID_BYTES,
  MAX_PARTITION_KEY_BYTES,
  type MessageItem,
  messageItem,
  PARTITION_KEY,
  POSITION,
  SCHEMA_VERSION,
  SORT_KEY,
  type StorageProblem,
  storageProblem,
  storedSize,
} from "./dynamodb/schema.js";
export {
  type Arrival,
  DynamoDbStore,
  type DynamoDbStoreOptions,
  MessageTooLargeError,
  type PositionedMessage,
} from "./dynamodb/store.js";
export { createMessagesTable, messagesTableDefinition } from "./dynamodb/table.js";
export {
  describeError,
  findCause,
  HistoryError,
  InvalidConversationIdError,
  InvalidMessageError,
  InvalidWriteOutcomeError,
  NilStoreError,
} from "./errors.js";
export { MemoryStore, type MemoryStoreOptions } from "./memory-store.js";
export {
  cloneMessage,
  type JsonValue,
  type Message,
  type Metadata,
  messageText,
  type Part,
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
export {
  type CallOptions,
  type Clearer,
  type Lister,
  prepareWrite,
  type Reader,
  type ReadWriter,
  type Store,
  type Writer,
} from "./store.js";
