/**
 * The poller end to end on the emulators: the scripted Discord API, cursors in DynamoDB Local,
 * lines through the SQS emulator's queue into `IngestClient` (what the ingestion function runs
 * on each body) and the messages table, which the re-read window reads back.
 */
import { CreateQueueCommand } from "@aws-sdk/client-sqs";
import {
  DiscordRest,
  DynamoDbCursorStore,
  pollDiscord,
  queueSink,
  simulatedClock,
} from "convoseg/connectors/discord";
import { messageText } from "convoseg/history";
import { createMessagesTable, DynamoDbStore } from "convoseg/history/dynamodb";
import { IngestClient } from "convoseg/ingest";
import { createChannelsTable } from "convoseg/pipeline/schema";
import { afterEach, describe, expect, it } from "vitest";
import { type DiscordServer, startDiscordServer } from "../../../../bench/discord-server.js";
import { createTestTable, testDynamoDbClient } from "../../../support/dynamodb.js";
import { drainQueue, testSqsClient, uniqueQueueName } from "../../../support/sqs.js";

let server: DiscordServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("DynamoDbCursorStore", () => {
  it("moves a cursor only forward, numerically, and keeps its fields", async () => {
    const client = testDynamoDbClient();
    const table = await createTestTable(client, {
      AttributeDefinitions: [{ AttributeName: "key", AttributeType: "S" }],
      KeySchema: [{ AttributeName: "key", KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
    });
    const cursors = new DynamoDbCursorStore(client, table);
    expect(
      await cursors.advance("c", "1457705189376000000", { recent: ["9", "1457705189376000000"] }),
    ).toBe(true);
    expect(await cursors.advance("c", "999999999999999999")).toBe(false);
    expect(await cursors.advance("c", "1457705189376000000")).toBe(false);
    expect(await cursors.advance("c", "1457705189376000001")).toBe(true);
    await cursors.update("c", {
      name: "general",
      metaAt: 5,
      archivedAt: 7,
      archivedBefore: "2024-01-11T10:00:00.000Z",
      archivedTop: 9,
    });
    const keys = Array.from({ length: 150 }, (_, i) => `k${i}`);
    for (const key of keys.slice(0, 3)) await cursors.update(key, { since: "1" });
    const found = await cursors.getMany(["c", ...keys]);
    expect(found.get("c")).toEqual({
      key: "c",
      cursor: "1457705189376000001",
      recent: ["9", "1457705189376000000"],
      name: "general",
      metaAt: 5,
      archivedAt: 7,
      archivedBefore: "2024-01-11T10:00:00.000Z",
      archivedTop: 9,
    });
    expect(found.size).toBe(4);
  });
});

describe("the poller on the emulators", () => {
  it("reads channels into the queue, the ingestion stores them, and the re-read sends an edit and a deletion", async () => {
    const dynamodb = testDynamoDbClient();
    const sqs = testSqsClient();
    const cursorsTable = await createTestTable(dynamodb, {
      AttributeDefinitions: [{ AttributeName: "key", AttributeType: "S" }],
      KeySchema: [{ AttributeName: "key", KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
    });
    const messagesTable = `discord-${Date.now().toString(36)}`;
    await createMessagesTable(dynamodb, messagesTable);
    await createChannelsTable(dynamodb, `${messagesTable}-channels`);
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({ QueueName: uniqueQueueName("discord") }),
    );
    const queueUrl = QueueUrl as string;
    const ingestion = new IngestClient({
      messagesTable,
      channelsTable: `${messagesTable}-channels`,
      client: dynamodb,
    });
    const history = new DynamoDbStore({ client: dynamodb, tableName: messagesTable });
    const clock = simulatedClock(Date.UTC(2026, 0, 5, 12));
    server = await startDiscordServer({ token: "t", now: clock.now });
    server.channel("100", { name: "general" });
    const posted = Array.from({ length: 120 }, () => server?.post("100").id as string);
    const cursors = new DynamoDbCursorStore(dynamodb, cursorsTable);
    const poll = () =>
      pollDiscord(
        {
          rest: new DiscordRest({ token: "t", baseUrl: server?.url, clock }),
          cursors,
          sink: queueSink(sqs, queueUrl),
          store: { getMessages: (channel, ids) => history.getMessages(channel, ids) },
          clock,
        },
        { channels: ["100"], threads: false, backfillFrom: clock.now() - 60_000 },
      );
    // What the ingestion function does with each body of the queue.
    const deliver = async () => {
      const bodies = (await drainQueue(sqs, queueUrl)).map((m) => JSON.parse(m.Body as string));
      return ingestion.ingest(bodies);
    };
    expect(await poll()).toMatchObject({ ingested: 120, stopped: [] });
    expect((await deliver()).stored).toHaveLength(120);
    expect((await history.read("100")).map((m) => m.id).sort()).toEqual([...posted].sort());
    expect((await cursors.getMany(["100"])).get("100")?.cursor).toBe(posted.at(-1));

    server.edit("100", posted[110], "edited text");
    server.remove("100", posted[111]);
    expect(await poll()).toMatchObject({ ingested: 0, edits: 1, deletions: 1 });
    const applied = await deliver();
    expect(applied.changes.map((c) => c.status)).toEqual(["applied", "applied"]);
    const [edited, deleted] = await history.getMessages("100", [posted[110], posted[111]]);
    expect(messageText(edited)).toBe("edited text");
    expect(deleted.deleted).toBe(true);
    expect(await poll()).toMatchObject({ edits: 0, deletions: 0 });
  });
});
