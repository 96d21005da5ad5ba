/**
 * The display name of a channel, as its messages carry it (`channelName`): what lets a command
 * take a channel's name where it expects its id. Read from the messages table, so that it needs
 * nothing written for it: the latest arrivals are read from `byPosition`, newest first. And
 * taken off the messages where an erasure finds it names the person.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { paginateQuery, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { realSleep } from "../../base/backoff/index.js";
import { documentClient, isConditionFailure } from "../../base/dynamodb/index.js";
import type { ChannelNames } from "../changes/channel-names.js";
import { type ConversationId, validateConversationId } from "../conversation-id.js";
import type { CallOptions } from "../store.js";
import { type TableAccess, withRetries } from "./access.js";
import { BY_POSITION_INDEX, PARTITION_KEY, SORT_KEY } from "./schema.js";

/**
 * Arrivals read at most for a name: a channel whose latest messages carry none (a producer that
 * sends no `channelName`) has none, without reading the whole channel to find an old one. The
 * read API's channel list reads as many.
 */
export const NAMED_ARRIVALS = 20;

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

/**
 * A channel's display name taken off its messages in the messages table (`ChannelNames`): one
 * Query of the conversation's items that carry it (read whole: DynamoDB filters after reading),
 * then per item an update that removes it only while it is still that name.
 */
export class DynamoDbChannelNames implements ChannelNames {
  private readonly access: TableAccess;

  constructor(options: { client: DynamoDBClient; tableName: string; maxAttempts?: number }) {
    this.access = {
      documents: documentClient(options.client),
      tableName: options.tableName,
      maxAttempts: options.maxAttempts ?? 8,
      pacing: { baseDelayMs: 25, maxDelayMs: 2000, random: Math.random, sleep: realSleep },
    };
  }

  async clearChannelName(
    conversationId: ConversationId,
    name: string,
    except: readonly string[] = [],
  ): Promise<number> {
    validateConversationId(conversationId);
    const { documents, tableName } = this.access;
    const names = { "#c": PARTITION_KEY, "#k": SORT_KEY, "#n": "channelName" };
    const pages = paginateQuery(
      { client: documents },
      {
        TableName: tableName,
        KeyConditionExpression: "#c = :c",
        FilterExpression: "#n = :n",
        ProjectionExpression: "#k, id",
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ":c": conversationId, ":n": name },
        ConsistentRead: true,
      },
    );
    let cleared = 0;
    for await (const page of pages) {
      for (const item of page.Items ?? []) {
        if (except.includes(String(item.id))) continue;
        const removed = await withRetries(this.access, () =>
          documents
            .send(
              new UpdateCommand({
                TableName: tableName,
                Key: { [PARTITION_KEY]: conversationId, [SORT_KEY]: item[SORT_KEY] },
                UpdateExpression: "REMOVE #n",
                ConditionExpression: "#n = :n",
                ExpressionAttributeNames: { "#n": "channelName" },
                ExpressionAttributeValues: { ":n": name },
              }),
            )
            .then(
              () => true,
              (error: unknown) => {
                // Renamed or cleared meanwhile: nothing of this name is left on it.
                if (isConditionFailure(error)) return false;
                throw error;
              },
            ),
        );
        if (removed) cleared++;
      }
    }
    return cleared;
  }
}
