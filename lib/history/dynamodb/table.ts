import {
  CreateTableCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";
import {
  BY_POSITION_INDEX,
  CONVERSATIONS_INDEX,
  LISTED,
  PARTITION_KEY,
  POSITION,
  SORT_KEY,
} from "./schema.js";

/**
 * The messages table as CreateTable input: on-demand, with the `byPosition` local index
 * (arrival order) and the sparse `conversations` global index. The CDK stack declares the same
 * keys and indexes from the constants of `./schema.ts`.
 */
export function messagesTableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: [
      { AttributeName: PARTITION_KEY, AttributeType: "S" },
      { AttributeName: SORT_KEY, AttributeType: "S" },
      { AttributeName: POSITION, AttributeType: "S" },
      { AttributeName: LISTED, AttributeType: "S" },
    ],
    KeySchema: [
      { AttributeName: PARTITION_KEY, KeyType: "HASH" },
      { AttributeName: SORT_KEY, KeyType: "RANGE" },
    ],
    LocalSecondaryIndexes: [
      {
        IndexName: BY_POSITION_INDEX,
        KeySchema: [
          { AttributeName: PARTITION_KEY, KeyType: "HASH" },
          { AttributeName: POSITION, KeyType: "RANGE" },
        ],
        Projection: { ProjectionType: "ALL" },
      },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: CONVERSATIONS_INDEX,
        KeySchema: [
          { AttributeName: LISTED, KeyType: "HASH" },
          { AttributeName: PARTITION_KEY, KeyType: "RANGE" },
        ],
        Projection: { ProjectionType: "KEYS_ONLY" },
      },
    ],
  };
}

/**
 * Creates a table and waits until it is active: for local runs and tests (deployments use the
 * CDK stack). The waiter polls every second; its default first delay is 20 s.
 */
export async function createTable(
  client: DynamoDBClient,
  input: CreateTableCommandInput,
): Promise<void> {
  await client.send(new CreateTableCommand(input));
  await waitUntilTableExists(
    { client, maxWaitTime: 60, minDelay: 1 },
    { TableName: input.TableName },
  );
}

/** Creates the messages table (for local runs and tests) and waits until it is active. */
export function createMessagesTable(client: DynamoDBClient, tableName: string): Promise<void> {
  return createTable(client, messagesTableDefinition(tableName));
}
