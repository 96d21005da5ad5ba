import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

/**
 * The document client every convoseg table access goes through. `DynamoDBDocumentClient.from`
 * writes its options into the shared SDK client's configuration, so every document client on one
 * SDK client must use the same marshalling, or the last one built silently wins.
 */
export function documentClient(client: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}
