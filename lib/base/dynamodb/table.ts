import {
  CreateTableCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";

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
