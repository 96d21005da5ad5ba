/**
 * The history store on DynamoDB. `DynamoDbStore` over the messages table, the table's creation for
 * local runs and tests, a channel's latest name (and its removal), and the storage rule messages
 * must meet.
 */
export { DynamoDbChannelNames, latestChannelName } from "./channel-names.js";
export type { InferredReply } from "./inferred-replies.js";
export { storageProblem } from "./schema.js";
export { type Arrival, type ArrivalContent, DynamoDbStore } from "./store.js";
export { createMessagesTable } from "./table.js";
