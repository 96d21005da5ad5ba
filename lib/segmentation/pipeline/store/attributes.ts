/** What the DynamoDB channel store's parts share: the table they address and attribute values. */
import type { AttributeValue, DynamoDBClient } from "@aws-sdk/client-dynamodb";

/** The channels table, as each part of the store addresses it. */
export interface ChannelsTable {
  readonly client: DynamoDBClient;
  readonly tableName: string;
}

export type Item = Record<string, AttributeValue>;

export const S = (value: string): AttributeValue => ({ S: value });
export const N = (value: number | bigint): AttributeValue => ({ N: value.toString() });
