import type { CreateTableCommandInput, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { createTable } from "../../base/dynamodb/index.js";
import {
  AUTHOR_KEY,
  BY_AUTHOR_ATTRIBUTES,
  BY_AUTHOR_INDEX,
  BY_POSITION_ATTRIBUTES,
  BY_POSITION_INDEX,
  CONVERSATIONS_INDEX,
  LISTED,
  PARTITION_KEY,
  POSITION,
  SORT_KEY,
} from "./schema.js";

/**
 * The messages table as CreateTable input: on-demand, with the `byPosition` local index
 * (arrival order; ids and timestamps only) and the sparse `conversations` and `byAuthor` global
 * indexes. The CDK
 * stack declares the same keys and indexes from the constants of `./schema.ts`.
 */
function messagesTableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: [
      { AttributeName: PARTITION_KEY, AttributeType: "S" },
      { AttributeName: SORT_KEY, AttributeType: "S" },
      { AttributeName: POSITION, AttributeType: "S" },
      { AttributeName: LISTED, AttributeType: "S" },
      { AttributeName: AUTHOR_KEY, AttributeType: "S" },
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
        Projection: { ProjectionType: "INCLUDE", NonKeyAttributes: [...BY_POSITION_ATTRIBUTES] },
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
      {
        IndexName: BY_AUTHOR_INDEX,
        KeySchema: [
          { AttributeName: AUTHOR_KEY, KeyType: "HASH" },
          { AttributeName: PARTITION_KEY, KeyType: "RANGE" },
        ],
        Projection: { ProjectionType: "INCLUDE", NonKeyAttributes: [...BY_AUTHOR_ATTRIBUTES] },
      },
    ],
  };
}

/** Creates the messages table (for local runs and tests) and waits until it is active. */
export function createMessagesTable(client: DynamoDBClient, tableName: string): Promise<void> {
  return createTable(client, messagesTableDefinition(tableName));
}
