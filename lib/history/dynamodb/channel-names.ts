/**
 * The display name of a channel, as its messages carry it (`channelName`): what lets a command
 * take a channel's name where it expects its id. Read from the messages table, so that it needs
 * nothing written for it: the latest arrivals are read from `byPosition`, newest first.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { documentClient } from "../../base/dynamodb/index.js";
import { validateConversationId } from "../conversation-id.js";
import type { CallOptions } from "../store.js";
import { BY_POSITION_INDEX, PARTITION_KEY } from "./schema.js";

/**
 * Arrivals read at most for a name: a channel whose latest messages carry none (a producer that
 * sends no `channelName`) has none, without reading the whole channel to find an old one.
 */
const NAMED_ARRIVALS = 20;

/**
 * The `channelName` of the latest of the conversation's last {@link NAMED_ARRIVALS} arrivals that
 * has one (the channel's name now, when it was renamed), or undefined. One Query of one page.
 */
export async function latestChannelName(
  client: DynamoDBClient,
  tableName: string,
  conversation: string,
  options?: CallOptions,
): Promise<string | undefined> {
  options?.signal?.throwIfAborted();
  validateConversationId(conversation);
  const { Items } = await documentClient(client).send(
    new QueryCommand({
      TableName: tableName,
      IndexName: BY_POSITION_INDEX,
      KeyConditionExpression: "#c = :c",
      // Not projected into the index: DynamoDB fetches it from the table, per item read.
      ProjectionExpression: "#n",
      ExpressionAttributeNames: { "#c": PARTITION_KEY, "#n": "channelName" },
      ExpressionAttributeValues: { ":c": conversation },
      ScanIndexForward: false,
      Limit: NAMED_ARRIVALS,
    }),
    { abortSignal: options?.signal },
  );
  const named = (Items ?? []).find((item) => typeof item.channelName === "string");
  return named?.channelName as string | undefined;
}
