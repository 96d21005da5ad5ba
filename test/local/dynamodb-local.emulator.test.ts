import {
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
} from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestTable, testDynamoDbClient } from "../support/dynamodb.js";

// Evidence of what DynamoDB Local supports for the pipeline: conditional transactions with
// cancellation reasons, and ordered, paged queries on a local secondary index.
describe("DynamoDB Local", () => {
  const client = testDynamoDbClient();
  const db = DynamoDBDocumentClient.from(client);
  let table = "";

  // sk order differs from arrival order, so a result in arrival order proves the LSI was used.
  const items = [
    { pk: "conv#1", sk: "m1", arrival: "2024-01-01T00:00:05Z" },
    { pk: "conv#1", sk: "m2", arrival: "2024-01-01T00:00:01Z" },
    { pk: "conv#1", sk: "m3", arrival: "2024-01-01T00:00:04Z" },
    { pk: "conv#1", sk: "m4", arrival: "2024-01-01T00:00:02Z" },
    { pk: "conv#1", sk: "m5", arrival: "2024-01-01T00:00:03Z" },
    { pk: "conv#1", sk: "m6", arrival: "2024-01-01T00:00:06Z" },
    { pk: "conv#2", sk: "m1", arrival: "2024-01-01T00:00:09Z" },
  ];
  const put = (item: Record<string, string>) => ({
    Put: { TableName: table, Item: item, ConditionExpression: "attribute_not_exists(sk)" },
  });

  beforeAll(async () => {
    table = await createTestTable(client, {
      BillingMode: "PAY_PER_REQUEST",
      AttributeDefinitions: [
        { AttributeName: "pk", AttributeType: "S" },
        { AttributeName: "sk", AttributeType: "S" },
        { AttributeName: "arrival", AttributeType: "S" },
      ],
      KeySchema: [
        { AttributeName: "pk", KeyType: "HASH" },
        { AttributeName: "sk", KeyType: "RANGE" },
      ],
      LocalSecondaryIndexes: [
        {
          IndexName: "byArrival",
          KeySchema: [
            { AttributeName: "pk", KeyType: "HASH" },
            { AttributeName: "arrival", KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "ALL" },
        },
      ],
    });
    await db.send(new TransactWriteCommand({ TransactItems: items.map(put) }));
  });

  afterAll(() => client.destroy());

  it("cancels a transaction whose condition fails, with reasons, and writes nothing", async () => {
    const fresh = { pk: "conv#1", sk: "m7", arrival: "2024-01-01T00:00:07Z" };
    const duplicate = { pk: "conv#1", sk: "m2", arrival: "2024-01-01T00:00:08Z" };
    const write = db.send(
      new TransactWriteCommand({
        TransactItems: [
          put(fresh),
          {
            Put: { ...put(duplicate).Put, ReturnValuesOnConditionCheckFailure: "ALL_OLD" },
          },
        ],
      }),
    );

    await expect(write).rejects.toMatchObject({
      name: "TransactionCanceledException",
      CancellationReasons: [
        { Code: "None" },
        {
          Code: "ConditionalCheckFailed",
          Item: { sk: { S: "m2" }, arrival: { S: "2024-01-01T00:00:01Z" } },
        },
      ],
    });
    const { Item } = await db.send(
      new GetCommand({ TableName: table, Key: { pk: "conv#1", sk: "m7" } }),
    );
    expect(Item).toBeUndefined();
  });

  it("queries the LSI by arrival range in order, page by page", async () => {
    const pages: string[][] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await db.send(
        new QueryCommand({
          TableName: table,
          IndexName: "byArrival",
          KeyConditionExpression: "pk = :pk AND arrival > :x",
          ExpressionAttributeValues: { ":pk": "conv#1", ":x": "2024-01-01T00:00:01Z" },
          Limit: 2,
          ExclusiveStartKey,
        }),
      );
      pages.push((page.Items ?? []).map((item) => item.sk as string));
      ExclusiveStartKey = page.LastEvaluatedKey;
      if (ExclusiveStartKey) {
        // The continuation key carries the index key and the table key.
        expect(Object.keys(ExclusiveStartKey).sort()).toEqual(["arrival", "pk", "sk"]);
      }
    } while (ExclusiveStartKey);

    expect(pages).toEqual([["m4", "m5"], ["m3", "m1"], ["m6"]]);
  });
});
