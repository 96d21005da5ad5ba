/**
 * Where the tick keeps each channel's state. The `ChannelStore` port and the records it holds, the
 * tick state's stored form, the store on the channels table (DynamoDB) and its memory double for
 * fast deterministic tests.
 */
export {
  type ChannelSnapshot,
  type ChannelStore,
  EMPTY_MARKS,
  EMPTY_TICK_STATE,
  hasWork,
  MAX_STATE_BYTES,
  STATE_PAGE_BYTES,
  type TickState,
} from "./channel-state.js";
export { DynamoDbChannelStore } from "./dynamodb-channel-store.js";
export { MemoryChannelStore } from "./memory-channel-store.js";
export { decodeTickState, encodeTickState } from "./tick-state.js";
