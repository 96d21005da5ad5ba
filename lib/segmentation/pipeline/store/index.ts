/**
 * Where the tick keeps each channel's state: the `ChannelStore` port and the records it holds,
 * the tick state's stored form, the store on the channels table (DynamoDB) and its memory double
 * for fast deterministic tests.
 */
export {
  type BrokenHold,
  type ChannelMarks,
  type ChannelRecord,
  type ChannelSnapshot,
  type ChannelStore,
  type DueChannel,
  EMPTY_TICK_STATE,
  type Hold,
  hasWork,
  MAX_STATE_BYTES,
  type Outbox,
  type RecordOutcome,
  STATE_PAGE_BYTES,
  type TickState,
} from "./channel-state.js";
export {
  DynamoDbChannelStore,
  type DynamoDbChannelStoreOptions,
} from "./dynamodb-channel-store.js";
export { MemoryChannelStore } from "./memory-channel-store.js";
export { decodeTickState, encodeTickState } from "./tick-state.js";
