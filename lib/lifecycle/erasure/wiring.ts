/**
 * The eraser over a deployment's (or a workspace's) DynamoDB tables, as the command and the
 * `EraseUser` function build it; and what an older messages table needs first: the `byAuthor`
 * index (added in place on a workspace) and the author keys of messages stored before it.
 */
import {
  DescribeTableCommand,
  type DynamoDBClient,
  UpdateTableCommand,
} from "@aws-sdk/client-dynamodb";
import { paginateScan, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { realSleep } from "../../base/backoff/index.js";
import { documentClient, isConditionFailure } from "../../base/dynamodb/index.js";
import { DynamoDbChannelNames, DynamoDbStore } from "../../history/dynamodb/index.js";
import {
  AUTHOR_KEY,
  BY_AUTHOR_ATTRIBUTES,
  BY_AUTHOR_INDEX,
  messageAuthorKey,
  PARTITION_KEY,
  SORT_KEY,
} from "../../history/schema/index.js";
import { DynamoDbResultStore } from "../../knowledge/store/index.js";
import {
  KnowledgeRedactor,
  type RedactionMetrics,
  storedMessageStates,
} from "../../knowledge/write/index.js";
import { DynamoDbChannelStore } from "../../segmentation/pipeline/store/index.js";
import { DynamoDbAuditStore } from "./audit-dynamodb.js";
import type { ErasureDependencies } from "./dependencies.js";
import { ErasureError } from "./errors.js";

export interface ErasureTables {
  client: DynamoDBClient;
  messagesTable: string;
  resultsTable: string;
  /** The channels table, whose tick keeps each channel's reply linker window (reset by an erasure). */
  channelsTable: string;
  /** The secret the audit item's keys are hashed with (the stack's, or a workspace's own). */
  auditSecret: string;
  metrics?: RedactionMetrics;
}

/** The eraser's dependencies on DynamoDB: no re-extraction is asked for (its messages are gone). */
export function dynamoDbErasure(
  tables: ErasureTables,
  extra: Partial<ErasureDependencies> = {},
): ErasureDependencies {
  // One due shard: a reset marks a channel due in shard 0, which every tick reads whatever its
  // shard count (the tick moves it to its own when it finishes the channel), so the eraser
  // needs no `dueShards` setting.
  const channels = new DynamoDbChannelStore({
    client: tables.client,
    tableName: tables.channelsTable,
    dueShards: 1,
  });
  const messages = new DynamoDbStore({ client: tables.client, tableName: tables.messagesTable });
  const results = new DynamoDbResultStore({
    client: tables.client,
    tableName: tables.resultsTable,
  });
  return {
    messages,
    redactor: new KnowledgeRedactor({
      store: results,
      states: storedMessageStates(messages),
      metrics: tables.metrics,
      ...(extra.search && { onRedacted: extra.search.redacted.bind(extra.search) }),
    }),
    results,
    channelNames: new DynamoDbChannelNames({
      client: tables.client,
      tableName: tables.messagesTable,
    }),
    audits: new DynamoDbAuditStore({ client: tables.client, tableName: tables.resultsTable }),
    auditSecret: tables.auditSecret,
    channels,
    ...extra,
  };
}

/** Whether the messages table has the `byAuthor` index, and whether it is ready. */
export async function authorIndexState(
  client: DynamoDBClient,
  tableName: string,
): Promise<"missing" | "creating" | "active"> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const index = Table?.GlobalSecondaryIndexes?.find((i) => i.IndexName === BY_AUTHOR_INDEX);
  if (index === undefined) return "missing";
  return index.IndexStatus === "ACTIVE" ? "active" : "creating";
}

/**
 * Adds the `byAuthor` index to a messages table created before it (a local workspace's; a
 * deployment gets it from the stack) and waits until it is active.
 */
export async function addAuthorIndex(
  client: DynamoDBClient,
  tableName: string,
  options: { sleep?: (ms: number) => Promise<void>; timeoutMs?: number } = {},
): Promise<void> {
  if ((await authorIndexState(client, tableName)) === "missing") {
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [
          { AttributeName: AUTHOR_KEY, AttributeType: "S" },
          { AttributeName: PARTITION_KEY, AttributeType: "S" },
        ],
        GlobalSecondaryIndexUpdates: [
          {
            Create: {
              IndexName: BY_AUTHOR_INDEX,
              KeySchema: [
                { AttributeName: AUTHOR_KEY, KeyType: "HASH" },
                { AttributeName: PARTITION_KEY, KeyType: "RANGE" },
              ],
              Projection: {
                ProjectionType: "INCLUDE",
                NonKeyAttributes: [...BY_AUTHOR_ATTRIBUTES],
              },
            },
          },
        ],
      }),
    );
  }
  const sleep = options.sleep ?? realSleep;
  const until = Date.now() + (options.timeoutMs ?? 300_000);
  while ((await authorIndexState(client, tableName)) !== "active") {
    if (Date.now() > until) {
      throw new ErasureError(
        "ERASURE_INDEX_NOT_READY",
        `the ${BY_AUTHOR_INDEX} index of table ${tableName} is still being built: run again later`,
      );
    }
    await sleep(1000);
  }
}

/**
 * Gives every message the author key the current rule gives it (`messageAuthorKey`): those
 * stored before the `byAuthor` index have none, and those with a `userId` stored before the key
 * followed it carry their display name's. One Scan of the table (once, after an upgrade), one
 * conditional update per message whose key is missing or other (only while it still has the
 * key it was read with and is not deleted, so a deletion meanwhile is not undone). Resolves to
 * how many it updated; a second run updates none.
 */
export async function backfillAuthorKeys(
  client: DynamoDBClient,
  tableName: string,
): Promise<number> {
  const documents = documentClient(client);
  let updated = 0;
  const pages = paginateScan(
    { client: documents },
    {
      TableName: tableName,
      ProjectionExpression: "#c, #k, #id, #a, #uid, #ak",
      // Keyed by name without a user id: already right. With a user id: compared below.
      FilterExpression:
        "attribute_exists(#id) AND attribute_not_exists(deleted) AND (attribute_exists(#uid) OR (attribute_exists(#a) AND attribute_not_exists(#ak)))",
      ExpressionAttributeNames: {
        "#c": PARTITION_KEY,
        "#k": SORT_KEY,
        "#id": "id",
        "#a": "author",
        "#uid": "userId",
        "#ak": AUTHOR_KEY,
      },
    },
  );
  for await (const page of pages) {
    for (const item of page.Items ?? []) {
      const key = messageAuthorKey(item);
      const was = item[AUTHOR_KEY] as string | undefined;
      if (key === undefined || key === was) continue;
      try {
        await documents.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { [PARTITION_KEY]: item[PARTITION_KEY], [SORT_KEY]: item[SORT_KEY] },
            UpdateExpression: "SET #ak = :ak",
            ConditionExpression: `${was === undefined ? "attribute_not_exists(#ak)" : "#ak = :was"} AND attribute_not_exists(deleted)`,
            ExpressionAttributeNames: { "#ak": AUTHOR_KEY },
            ExpressionAttributeValues: {
              ":ak": key,
              ...(was === undefined ? {} : { ":was": was }),
            },
          }),
        );
        updated++;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
  }
  return updated;
}
