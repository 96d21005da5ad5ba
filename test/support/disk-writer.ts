/**
 * A child process for test/local/dynamodb-local-disk.emulator.test.ts: starts DynamoDB Local on the
 * directory it is given, prints the JVM's pid, then puts items one after another, printing the
 * number of each answered put, until it is killed.
 */
import { CreateTableCommand, DynamoDBClient, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { startDynamoDbLocal } from "../../local/dynamodb-local.js";

const local = await startDynamoDbLocal({ dbPath: process.argv[2] });
process.stdout.write(`jvm ${local.pid}\n`);
const client = new DynamoDBClient({
  endpoint: local.endpoint,
  region: "us-east-1",
  credentials: { accessKeyId: "local", secretAccessKey: "local" },
});
await client.send(
  new CreateTableCommand({
    TableName: "disk",
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: [{ AttributeName: "k", AttributeType: "S" }],
    KeySchema: [{ AttributeName: "k", KeyType: "HASH" }],
  }),
);
for (let i = 0; ; i++) {
  await client.send(
    new PutItemCommand({
      TableName: "disk",
      Item: { k: { S: `k${i}` }, v: { S: "x".repeat(2000) } },
    }),
  );
  process.stdout.write(`put ${i}\n`);
}
