/**
 * A conversation as a whole on the messages table (`./schema.ts`): its own item, which lists it
 * in the `conversations` index, the listing, and clearing every item of its partition.
 */
import { paginateQuery } from "@aws-sdk/lib-dynamodb";
import { batchWriteAll } from "../../base/dynamodb/index.js";
import { compareIds } from "../../base/identity/index.js";
import type { ConversationId } from "../conversation-id.js";
import { putIfAbsent, type TableAccess } from "./access.js";
import {
  CONVERSATION_ITEM_KEY,
  CONVERSATIONS_INDEX,
  LISTED,
  LISTED_VALUE,
  PARTITION_KEY,
  SORT_KEY,
} from "./schema.js";

const MAX_BATCH_DELETES = 25;

/**
 * Creates the conversation's own item if it is missing. Conditional, so that only the first
 * write of a conversation touches the conversations index (the store calls it once per process).
 */
export async function putConversationItem(
  access: TableAccess,
  conversationId: string,
  signal?: AbortSignal,
): Promise<void> {
  await putIfAbsent(
    access,
    { [PARTITION_KEY]: conversationId, [SORT_KEY]: CONVERSATION_ITEM_KEY, [LISTED]: LISTED_VALUE },
    signal,
  );
}

/** Every listed conversation, in code point order: one Query of the conversations index. */
export async function listConversations(access: TableAccess): Promise<ConversationId[]> {
  const ids: ConversationId[] = [];
  const pages = paginateQuery(
    { client: access.documents },
    {
      TableName: access.tableName,
      IndexName: CONVERSATIONS_INDEX,
      KeyConditionExpression: "#l = :l",
      ExpressionAttributeNames: { "#l": LISTED },
      ExpressionAttributeValues: { ":l": LISTED_VALUE },
    },
  );
  for await (const page of pages) {
    for (const item of page.Items ?? []) ids.push(item[PARTITION_KEY] as string);
  }
  // The index orders by UTF-8 bytes already; sorting again guards the contract cheaply.
  return ids.sort(compareIds);
}

/**
 * Deletes every item of the conversation's partition (its messages, tombstones and own item),
 * page by page of a consistent Query of the keys, in batches retried until none is left.
 */
export async function clearConversation(
  access: TableAccess,
  conversationId: ConversationId,
  signal?: AbortSignal,
): Promise<void> {
  const pages = paginateQuery(
    { client: access.documents },
    {
      TableName: access.tableName,
      ConsistentRead: true,
      KeyConditionExpression: "#c = :c",
      ProjectionExpression: "#c, #k",
      ExpressionAttributeNames: { "#c": PARTITION_KEY, "#k": SORT_KEY },
      ExpressionAttributeValues: { ":c": conversationId },
    },
  );
  for await (const page of pages) {
    const keys = page.Items ?? [];
    for (let i = 0; i < keys.length; i += MAX_BATCH_DELETES) {
      const batch = keys.slice(i, i + MAX_BATCH_DELETES);
      await batchWriteAll(
        batch.map((key) => ({ DeleteRequest: { Key: key } })),
        { ...access, signal },
      );
    }
  }
}
