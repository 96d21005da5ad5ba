import type { CreateTableCommandInput, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { createTable } from "../../../base/dynamodb/index.js";

/**
 * The results table's keys: every item of a channel (or imported conversation) shares its
 * partition, told apart by `item` (see `./items.ts` for the item kinds).
 */
export const RESULTS_PARTITION_KEY = "channel";
export const RESULTS_SORT_KEY = "item";
/**
 * Epoch seconds after which DynamoDB deletes an item: which items carry it, and whose it is, is
 * each kind's `retention` in the registry (`lib/knowledge/kinds.ts`).
 */
export const RESULTS_TTL_ATTRIBUTE = "expiresAt";

/** The results table as CreateTable input (on-demand); the CDK stack declares the same keys. */
export function resultsTableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: [
      { AttributeName: RESULTS_PARTITION_KEY, AttributeType: "S" },
      { AttributeName: RESULTS_SORT_KEY, AttributeType: "S" },
    ],
    KeySchema: [
      { AttributeName: RESULTS_PARTITION_KEY, KeyType: "HASH" },
      { AttributeName: RESULTS_SORT_KEY, KeyType: "RANGE" },
    ],
  };
}

/** Creates the results table (for local runs and tests) and waits until it is active. */
export function createResultsTable(client: DynamoDBClient, tableName: string): Promise<void> {
  return createTable(client, resultsTableDefinition(tableName));
}
