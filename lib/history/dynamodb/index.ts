/**
 * The history store on DynamoDB. `DynamoDbStore` over the messages table, the table's creation for
 * local runs and tests, a channel's latest name (and its removal), and the storage rule messages
 * must meet.
 */

export type { Arrival, ArrivalContent } from "./arrivals.js";
export { DynamoDbChannelNames, latestChannelName, NAMED_ARRIVALS } from "./channel-names.js";
export type { InferredReply } from "./inferred-replies.js";
export { storageProblem } from "./schema.js";
export { DynamoDbStore } from "./store.js";
export { createMessagesTable } from "./table.js";
