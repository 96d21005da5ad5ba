/**
 * The results table as the paths beside the store (redaction, the question index, term
 * statistics) use it: its own file so that those paths can share it without importing one
 * another.
 */
import { type DynamoDBDocumentClient, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { BatchWriteOptions } from "../../base/dynamodb/index.js";
import { RESULTS_PARTITION_KEY, RESULTS_SORT_KEY } from "./schema/table.js";

export type RedactionTable = Omit<BatchWriteOptions, "tableName"> & {
  documents: DynamoDBDocumentClient;
  tableName: string;
};

/**
 * Every item under `prefix` in `partition`, page by page: strongly consistent unless
 * `consistent` is false, only the `projection` attributes when given.
 */
export async function queryPrefix(
  table: { documents: DynamoDBDocumentClient; tableName: string },
  partition: string,
  prefix: string,
  options: { consistent?: boolean; projection?: readonly string[] } = {},
): Promise<Record<string, unknown>[]> {
  const { consistent = true, projection } = options;
  const names = Object.fromEntries((projection ?? []).map((name, i) => [`#p${i}`, name]));
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await table.documents.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: "#pk = :pk AND begins_with(#sk, :prefix)",
        ExpressionAttributeNames: {
          "#pk": RESULTS_PARTITION_KEY,
          "#sk": RESULTS_SORT_KEY,
          ...names,
        },
        ExpressionAttributeValues: { ":pk": partition, ":prefix": prefix },
        ...(projection === undefined
          ? {}
          : { ProjectionExpression: Object.keys(names).join(", ") }),
        ...(consistent ? { ConsistentRead: true } : {}),
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items;
}
