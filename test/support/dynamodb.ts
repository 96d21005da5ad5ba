import { randomBytes } from "node:crypto";
import { type CreateTableCommandInput, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { createTable } from "convoseg/dynamodb";
import { inject } from "vitest";

/** A client for the emulator from the global setup; static credentials keep it off the env. */
export function testDynamoDbClient(): DynamoDBClient {
  return new DynamoDBClient({
    endpoint: inject("dynamodbEndpoint"),
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
  });
}

/** Creates a uniquely named table, so test files sharing the emulator never collide. */
export async function createTestTable(
  client: DynamoDBClient,
  definition: Omit<CreateTableCommandInput, "TableName">,
  prefix = "test",
): Promise<string> {
  const tableName = `${prefix}-${randomBytes(6).toString("hex")}`;
  await createTable(client, { ...definition, TableName: tableName });
  return tableName;
}
