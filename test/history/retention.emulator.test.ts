import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { documentClient } from "convoseg/dynamodb";
import { textMessage } from "convoseg/history";
import { createMessagesTable, DynamoDbStore, storageProblem } from "convoseg/history/dynamodb";
import { messageItem, storedSize } from "convoseg/history/schema";
import { IngestClient } from "convoseg/ingest";
import { createChannelsTable } from "convoseg/pipeline/schema";
import { beforeAll, describe, expect, it } from "vitest";
import { testDynamoDbClient } from "../support/dynamodb.js";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 2, 1, 12, 0, 0, 500);
const client = testDynamoDbClient();
const documents = documentClient(client);
const suffix = Date.now().toString(36);
const messagesTable = `retention-messages-${suffix}`;
const channelsTable = `retention-channels-${suffix}`;

beforeAll(async () => {
  await Promise.all([
    createMessagesTable(client, messagesTable),
    createChannelsTable(client, channelsTable),
  ]);
});

/** The stored item's TTL attribute, read back from the table. */
async function expiresAt(conversation: string, key: string): Promise<unknown> {
  const { Item } = await documents.send(
    new GetCommand({ TableName: messagesTable, Key: { conversation, key }, ConsistentRead: true }),
  );
  expect(Item, key).toBeDefined();
  return Item?.expiresAt;
}

describe("message retention", () => {
  it("writes expiresAt by each message's platform time, floored at the write", async () => {
    const store = new DynamoDbStore({
      client,
      tableName: messagesTable,
      retentionDays: 30,
      now: () => NOW,
    });
    const recent = NOW - 2 * DAY + 999;
    await store.write("kept", [
      textMessage("user", "recent", { id: "recent", ts: recent }),
      // Ten years old: an expiry that far past would be ignored by DynamoDB's TTL.
      textMessage("user", "old", { id: "old", ts: NOW - 3650 * DAY }),
    ]);
    await store.write("kept", [textMessage("user", "no id, no time")]);

    expect(await expiresAt("kept", "m#recent")).toBe(Math.floor((recent + 30 * DAY) / 1000));
    expect(await expiresAt("kept", "m#old")).toBe(Math.floor(NOW / 1000));
    // Without a platform time, by the write.
    const stored = [];
    for await (const entry of store.readAfter("kept", undefined)) stored.push(entry);
    const unkeyed = stored.find((entry) => entry.message.id === undefined);
    const key = `p#${unkeyed?.position.toString().padStart(20, "0")}`;
    expect(await expiresAt("kept", key)).toBe(Math.floor((NOW + 30 * DAY) / 1000));
    const items = await new DynamoDbStore({ client, tableName: messagesTable }).read("kept");
    // The expiry is the table's business: readers get the messages as written.
    expect(items.map((m) => Object.keys(m).includes("expiresAt"))).toEqual([false, false, false]);
  });

  it("writes no expiresAt without a retention, and refuses a retention that is no whole day", async () => {
    const store = new DynamoDbStore({ client, tableName: messagesTable });
    await store.write("forever", [textMessage("user", "x", { id: "1", ts: NOW })]);
    expect(await expiresAt("forever", "m#1")).toBeUndefined();
    for (const days of [0, 1.5, 36_501]) {
      expect(
        () => new DynamoDbStore({ client, tableName: messagesTable, retentionDays: days }),
      ).toThrow(/retentionDays must be a whole number of days from 1 to 36500/);
    }
  });

  it("ingests with the deployment's retention, by the message's own ts", async () => {
    const ingestion = new IngestClient({
      client,
      messagesTable,
      channelsTable,
      messageRetentionDays: 7,
    });
    const ts = new Date(Date.now() - DAY + 250).toISOString();
    const before = Date.now();
    const result = await ingestion.ingest([
      { id: "a", ts, channel: "help", user: "dee", text: "hi" },
      { id: "b", ts: Date.UTC(2001, 0, 1), channel: "help", user: "dee", text: "old" },
    ]);
    const after = Date.now();
    expect(result.stored).toEqual([0, 1]);
    expect(await expiresAt("help", "m#a")).toBe(Math.floor((Date.parse(ts) + 7 * DAY) / 1000));
    const floored = Number(await expiresAt("help", "m#b"));
    expect(floored).toBeGreaterThanOrEqual(Math.floor(before / 1000));
    expect(floored).toBeLessThanOrEqual(Math.floor(after / 1000));
  });

  it("keeps room for the expiry: the largest message ingestion accepts is stored with one", async () => {
    const withText = (text: string) => textMessage("user", text, { id: "big", ts: NOW });
    const overhead = storedSize(messageItem("big", withText(""), 0n, 9_999_999_999));
    const largest = withText("y".repeat(400 * 1024 - overhead));
    expect(storageProblem("big", largest)).toBeUndefined();
    expect(storageProblem("big", withText("y".repeat(400 * 1024 - overhead + 1)))).toMatchObject({
      part: "size",
    });
    const store = new DynamoDbStore({ client, tableName: messagesTable, retentionDays: 36_500 });
    await expect(store.write("big", [largest])).resolves.toEqual({
      accepted: 1,
      uncertain: false,
    });
  });
});
