import { createMessagesTable, DynamoDbStore } from "convoseg/history/dynamodb";
import { IngestClient } from "convoseg/ingest";
import { createChannelsTable } from "convoseg/pipeline/schema";
import { DynamoDbChannelStore } from "convoseg/pipeline/store";
import { describe, expect, it } from "vitest";
import { testDynamoDbClient } from "../../support/dynamodb.js";

describe("IngestClient", () => {
  it("writes chat messages once, marks their channel due, and reports repeats and invalid ones", async () => {
    const client = testDynamoDbClient();
    const tableName = `ingest-client-${Date.now().toString(36)}`;
    const channelsTable = `${tableName}-channels`;
    await createMessagesTable(client, tableName);
    await createChannelsTable(client, channelsTable);
    const ingestion = new IngestClient({ messagesTable: tableName, channelsTable, client });
    const before = Date.now();
    const batch = [
      { id: 1, ts: "2025-03-03T08:00:00Z", channel: "general", user: "ana", text: "hi" },
      { id: 2, ts: 1741000000000, channel: "general", text: "there" },
      { id: "", ts: 1741000000000, channel: "general" },
    ];
    const first = await ingestion.ingest(batch);
    expect(first.stored).toEqual([0, 1]);
    expect(first.rejected.map((r) => [r.index, r.field])).toEqual([[2, "id"]]);
    const again = await ingestion.ingest(batch);
    expect(again).toMatchObject({ stored: [], unchanged: [0, 1], conflicts: [] });
    const channels = new DynamoDbChannelStore({ client, tableName: channelsTable });
    const { marks } = await channels.load("general");
    // Each write releases a lease, even one that stores nothing new: a repeat marks again.
    expect(marks.marks).toBe(2);
    expect(marks.holds).toEqual([]);
    expect(marks.dueAt).toBeGreaterThanOrEqual(before);
    const due = [];
    for await (const { channel } of channels.dueChannels(Date.now())) due.push(channel);
    expect(due).toEqual(["general"]);
    const stored = await new DynamoDbStore({ client, tableName }).read("general");
    expect(stored.map((m) => [m.id, m.ts, m.author])).toEqual([
      ["1", Date.UTC(2025, 2, 3, 8), "ana"],
      ["2", 1741000000000, undefined],
    ]);
  });

  it("stores the platform fields in the table, and a re-import of the same lines is unchanged", async () => {
    const client = testDynamoDbClient();
    const tableName = `ingest-platform-${Date.now().toString(36)}`;
    const channelsTable = `${tableName}-channels`;
    await createMessagesTable(client, tableName);
    await createChannelsTable(client, channelsTable);
    const ingestion = new IngestClient({ messagesTable: tableName, channelsTable, client });
    const where = { channel: "C024BE91L", platform: "slack", channelName: "general" };
    const batch = [
      { id: "1.1", ts: 1741000000000, user: "ana", userId: "U1", text: "how?", ...where },
      {
        id: "1.2",
        ts: 1741000000001,
        user: "bo",
        userId: "U2",
        text: "so",
        ...where,
        replyTo: "1.1",
        thread: "1.1",
      },
    ];
    expect((await ingestion.ingest(batch)).stored).toEqual([0, 1]);
    expect(await ingestion.ingest(batch)).toMatchObject({ unchanged: [0, 1], conflicts: [] });
    const store = new DynamoDbStore({ client, tableName });
    const [reply] = await store.getMessages("C024BE91L", ["1.2"]);
    expect(reply).toMatchObject({ userId: "U2", replyTo: "1.1", thread: "1.1", platform: "slack" });
    expect(reply.channelName).toBe("general");
  });

  it("edits and deletes through the table, telling its listener of the applied changes", async () => {
    const client = testDynamoDbClient();
    const tableName = `ingest-changes-${Date.now().toString(36)}`;
    const channelsTable = `${tableName}-channels`;
    await createMessagesTable(client, tableName);
    await createChannelsTable(client, channelsTable);
    const told: unknown[] = [];
    const ingestion = new IngestClient({
      messagesTable: tableName,
      channelsTable,
      client,
      onChanged: async (channel, changes) => void told.push([channel, changes]),
    });
    const ts = Date.UTC(2025, 2, 3, 8);
    await ingestion.ingest([
      { id: 1, ts, channel: "general", user: "ana", text: "hi" },
      { id: 2, ts: ts + 1, channel: "general", user: "bo", text: "there" },
    ]);
    const changes = [
      { op: "edit" as const, id: 1, channel: "general", text: "hello", editedAt: ts + 5 },
      { op: "delete" as const, id: 2, channel: "general" },
    ];
    const result = await ingestion.ingest(changes);
    expect(result.changes.map((c) => c.status)).toEqual(["applied", "applied"]);
    expect((await ingestion.ingest(changes)).changes.map((c) => c.status)).toEqual([
      "unchanged",
      "unchanged",
    ]);
    expect(told).toEqual([
      [
        "general",
        [
          { id: "1", ts, kind: "edit" },
          { id: "2", ts: ts + 1, kind: "delete" },
        ],
      ],
    ]);
    const stored = await new DynamoDbStore({ client, tableName }).read("general");
    expect(stored.map((m) => [m.id, m.parts, m.editedAt])).toEqual([
      ["1", [{ type: "text", text: "hello" }], ts + 5],
    ]);
  });
});
