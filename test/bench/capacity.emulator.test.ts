/**
 * The capacity accounting of the pipeline benchmark: DynamoDB's billing rules computed from item
 * sizes, checked against what DynamoDB Local reports where it reports right, and applied where
 * it reports wrong (failed conditional writes, transactions, empty queries).
 */
import { randomBytes } from "node:crypto";
import {
  type AttributeValue,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  type TransactWriteItemsCommandOutput,
} from "@aws-sdk/client-dynamodb";
import { itemSize, type WireValue, wireItemSize } from "convoseg/dynamodb";
import { textMessage } from "convoseg/history";
import { createMessagesTable, DynamoDbStore } from "convoseg/history/dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import {
  CapacityMeter,
  consumedBy,
  failedWriteUnits,
  readUnits,
  transactionWriteUnits,
  writeUnits,
} from "../../bench/capacity.js";
import { testDynamoDbClient } from "../support/dynamodb.js";

const S = (value: string): WireValue => ({ S: value });
const N = (value: string): WireValue => ({ N: value });

describe("DynamoDB's billing rules", () => {
  it("bills writes per KB and strongly consistent reads per 4 KB, rounding up, at least one", () => {
    expect([0, 1, 1024, 1025, 4000].map(writeUnits)).toEqual([1, 1, 1, 2, 4]);
    expect([0, 4096, 4097].map((b) => readUnits(b, true))).toEqual([1, 1, 2]);
    expect(readUnits(4097, false)).toBe(1);
    expect(readUnits(0, false)).toBe(0.5);
  });

  it("sizes items as DynamoDB does: names and strings in UTF-8, numbers by their digits", () => {
    expect(itemSize({ ab: "héllo" })).toBe(2 + 6);
    // One byte per two significant digits, plus one; zeros at either end do not count.
    expect(itemSize({ n: 123 })).toBe(1 + 3);
    expect(itemSize({ n: 1_000_000 })).toBe(1 + 2);
    expect(itemSize({ n: 1.5 })).toBe(1 + 2);
    expect(wireItemSize({ n: N("1796123077309000004") })).toBe(1 + 11);
    expect(itemSize({ b: new Uint8Array(10), t: true, z: null })).toBe(11 + 2 + 2);
    expect(itemSize({ l: ["a", "bc"], m: { k: "v" } })).toBe(1 + (3 + 2 + 3) + 1 + (3 + 1 + 1 + 1));
    expect(wireItemSize({ l: { L: [S("a"), S("bc")] }, m: { M: { k: S("v") } } })).toBe(
      itemSize({ l: ["a", "bc"], m: { k: "v" } }),
    );
  });

  it("bills a failed conditional write as a write of the item it found", () => {
    expect(failedWriteUnits({ k: S("x".repeat(2500)) })).toBe(3);
    expect(failedWriteUnits(undefined)).toBe(1);
  });

  it("bills every item of a transaction twice", () => {
    const puts = Array.from({ length: 10 }, (_, i) => ({
      Put: { Item: { k: S(`item-${i}`), v: S("x".repeat(290)) } },
    }));
    expect(transactionWriteUnits(puts)).toBe(20);
    expect(
      transactionWriteUnits([
        {
          Update: { Key: { k: S("a") }, ExpressionAttributeValues: { ":v": S("y".repeat(1500)) } },
        },
        { Delete: { Key: { k: S("b") } } },
      ]),
    ).toBe(4 + 2);
  });

  it("bills an empty Query page as the smallest read", () => {
    const consumed = consumedBy(
      "QueryCommand",
      { TableName: "t", ConsistentRead: true },
      { Items: [], ConsumedCapacity: { TableName: "t", CapacityUnits: 0 } },
      undefined,
    );
    expect(consumed).toEqual([{ table: "t", index: undefined, read: 1, write: 0 }]);
  });
});

describe("measured on DynamoDB Local", () => {
  const client = testDynamoDbClient();
  const meter = new CapacityMeter((command) => command).attach(client);
  let tableName: string;

  beforeAll(async () => {
    tableName = `capacity-${Date.now().toString(36)}`;
    await createMessagesTable(client, tableName);
  });

  const measure = async (act: () => Promise<unknown>) => {
    const before = meter.measured.length;
    await act().catch(() => undefined);
    return meter.measured.slice(before);
  };
  const item = (key: string, bytes: number): Record<string, AttributeValue> => ({
    conversation: { S: "c" },
    key: { S: key },
    position: { S: randomBytes(8).toString("hex") },
    id: { S: key },
    text: { S: "x".repeat(bytes) },
  });

  it("agrees with Local on single writes, whose item sizes it computes the same way", async () => {
    // Just under and just over 1 KB by our own sizing: Local bills 1 and 2 units for the table.
    for (const [extra, units] of [
      [0, 1],
      [1, 2],
    ]) {
      const base = item(`k${extra}`, 0);
      const text = "x".repeat(1024 - wireItemSize(base as Record<string, WireValue>) + extra);
      const consumed = await measure(() =>
        client.send(
          new PutItemCommand({ TableName: tableName, Item: { ...base, text: { S: text } } }),
        ),
      );
      expect(consumed.find((c) => c.index === undefined)?.write).toBe(units);
      // The byPosition entry (keys, id, ts) is small: one unit.
      expect(consumed.find((c) => c.index === "byPosition")?.write).toBe(1);
    }
  });

  it("bills the byAuthor entry of a message with an author: one unit to write, one to delete", async () => {
    const store = new DynamoDbStore({ client, tableName });
    const message = (id: string, author?: string) =>
      textMessage("user", "x".repeat(300), { id, ts: 1, ...(author ? { author } : {}) });
    const written = await measure(() =>
      store.write("authored", [message("a1", "Ana Lima"), message("a2")]),
    );
    const byAuthor = written.filter((c) => c.index === "byAuthor");
    // Only the message with an author has an entry; it is the keys only, one unit.
    expect(byAuthor.map((c) => c.write)).toEqual([1]);
    const deleted = await measure(() => store.change("authored", { kind: "delete", id: "a1" }));
    expect(deleted.filter((c) => c.index === "byAuthor").map((c) => c.write)).toEqual([1]);
    expect(deleted.find((c) => c.index === undefined)?.write).toBe(1);
  });

  it("bills a failed conditional put, which Local reports nothing for", async () => {
    await client.send(new PutItemCommand({ TableName: tableName, Item: item("dup", 2500) }));
    const consumed = await measure(() =>
      client.send(
        new PutItemCommand({
          TableName: tableName,
          Item: item("dup", 10),
          ConditionExpression: "attribute_not_exists(#k)",
          ExpressionAttributeNames: { "#k": "key" },
        }),
      ),
    );
    expect(consumed).toEqual([
      { operation: "PutItemCommand", table: tableName, read: 0, write: 3 },
    ]);
  });

  it("bills a transaction's items twice, where Local counts each distinct value once", async () => {
    const items = Array.from({ length: 10 }, (_, i) => item(`tx-${i}`, 200));
    let reported: TransactWriteItemsCommandOutput["ConsumedCapacity"];
    const consumed = await measure(async () => {
      const result = await client.send(
        new TransactWriteItemsCommand({
          TransactItems: items.map((Item) => ({ Put: { TableName: tableName, Item } })),
          ReturnConsumedCapacity: "TOTAL",
        }),
      );
      reported = result.ConsumedCapacity;
    });
    expect(consumed.reduce((sum, c) => sum + c.write, 0)).toBe(20);
    expect(reported?.[0]?.CapacityUnits).toBeLessThan(20);
  });

  it("bills an empty strongly consistent Query, which Local reports as zero", async () => {
    const consumed = await measure(() =>
      client.send(
        new QueryCommand({
          TableName: tableName,
          ConsistentRead: true,
          KeyConditionExpression: "conversation = :c",
          ExpressionAttributeValues: { ":c": { S: "nobody" } },
        }),
      ),
    );
    expect(consumed).toEqual([
      { operation: "QueryCommand", table: tableName, index: undefined, read: 1, write: 0 },
    ]);
  });
});
