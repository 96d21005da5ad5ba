/**
 * Batched writes against DynamoDB Local, with the service's partial answers made to happen: a
 * middleware holds back part of a batch and answers it as UnprocessedItems, as DynamoDB does
 * under throttling, or fails a call as throttled.
 */
import { DynamoDBClient, ScanCommand } from "@aws-sdk/client-dynamodb";
import { batchWriteAll, documentClient } from "convoseg/dynamodb";
import { describe, expect, inject, it } from "vitest";
import { createTestTable } from "../../support/dynamodb.js";

type Batch = { RequestItems: Record<string, unknown[]> };
const noPause = { baseDelayMs: 1, maxDelayMs: 1, random: () => 0, sleep: async () => {} };

/** A client whose BatchWriteItem calls go through `interfere` first. */
function interfered(
  interfere: (call: number, batch: Batch) => { hold?: number; fail?: string } | undefined,
) {
  const client = new DynamoDBClient({
    endpoint: inject("dynamodbEndpoint"),
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
    maxAttempts: 1,
  });
  const calls: number[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== "BatchWriteItemCommand") return next(args);
      const input = (args as { input: Batch }).input;
      const [table] = Object.keys(input.RequestItems);
      const requests = input.RequestItems[table];
      calls.push(requests.length);
      const plan = interfere(calls.length, input) ?? {};
      if (plan.fail) {
        throw Object.assign(new Error(plan.fail), { name: plan.fail, $metadata: {} });
      }
      const held = requests.slice(requests.length - (plan.hold ?? 0));
      input.RequestItems[table] = requests.slice(0, requests.length - held.length);
      // DynamoDB refuses an empty batch; holding all of it back is answering without a call.
      const result =
        held.length === requests.length
          ? { output: { $metadata: {} }, response: {} }
          : await next(args);
      if (held.length > 0) {
        (result.output as { UnprocessedItems?: unknown }).UnprocessedItems = { [table]: held };
      }
      return result;
    },
    { step: "initialize", name: "interfere" },
  );
  return { client, calls };
}

async function table(client: DynamoDBClient) {
  return createTestTable(client, {
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: [{ AttributeName: "k", AttributeType: "S" }],
    KeySchema: [{ AttributeName: "k", KeyType: "HASH" }],
  });
}

const puts = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ PutRequest: { Item: { k: `item-${i}` } } }));

async function stored(client: DynamoDBClient, tableName: string) {
  const { Items = [] } = await client.send(new ScanCommand({ TableName: tableName }));
  return Items.map((item) => item.k.S).sort();
}

describe("batchWriteAll", () => {
  it("writes in calls of 25 and retries what comes back unprocessed until all is written", async () => {
    const { client, calls } = interfered((call) => (call % 2 === 1 ? { hold: 7 } : undefined));
    const tableName = await table(client);
    const documents = documentClient(client);
    await batchWriteAll(puts(60), { documents, tableName, maxAttempts: 3, pacing: noPause });
    expect(calls).toEqual([25, 7, 25, 7, 10, 7]);
    expect(await stored(client, tableName)).toEqual(
      puts(60)
        .map((p) => p.PutRequest.Item.k)
        .sort(),
    );
  });

  it("retries a throttled call, and gives up at once on one that cannot succeed", async () => {
    const throttled = interfered((call) =>
      call === 1 ? { fail: "ProvisionedThroughputExceededException" } : undefined,
    );
    const tableName = await table(throttled.client);
    const documents = documentClient(throttled.client);
    await batchWriteAll(puts(3), { documents, tableName, maxAttempts: 3, pacing: noPause });
    expect(throttled.calls).toEqual([3, 3]);
    expect(await stored(throttled.client, tableName)).toHaveLength(3);

    const invalid = interfered(() => ({ fail: "ValidationException" }));
    await expect(
      batchWriteAll(puts(3), {
        documents: documentClient(invalid.client),
        tableName,
        maxAttempts: 3,
        pacing: noPause,
      }),
    ).rejects.toThrow("ValidationException");
    expect(invalid.calls).toEqual([3]);
  });

  it("says how many writes are still unprocessed after its last attempt", async () => {
    const { client, calls } = interfered(() => ({ hold: 2 }));
    const tableName = await table(client);
    await expect(
      batchWriteAll(puts(5), {
        documents: documentClient(client),
        tableName,
        maxAttempts: 3,
        pacing: noPause,
      }),
    ).rejects.toThrow(`table ${tableName}: 2 batched write(s) still unprocessed after 3 attempts`);
    expect(calls).toEqual([5, 2, 2]);
    expect(await stored(client, tableName)).toHaveLength(3);
  });
});
