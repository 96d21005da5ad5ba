import { describe, expect, it } from "vitest";
import { DynamoDbStore } from "../../lib/history/dynamodb/store.js";
import { createMessagesTable } from "../../lib/history/dynamodb/table.js";
import { IngestClient } from "../../lib/ingest/index.js";
import { ChannelStore, createChannelsTable } from "../../lib/pipeline/channel-store.js";
import { testDynamoDbClient } from "../support/dynamodb.js";

describe("IngestClient", () => {
  it("writes chat messages once, marks their channel due, and reports the invalid ones", async () => {
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
    await ingestion.ingest(batch);
    const channels = new ChannelStore({ client, tableName: channelsTable });
    const record = await channels.get("general");
    expect(record.marks).toBe(2);
    expect(record.dueAt).toBeGreaterThanOrEqual(before);
    const due = [];
    for await (const channel of channels.dueChannels(Date.now())) due.push(channel);
    expect(due).toEqual(["general"]);
    const stored = await new DynamoDbStore({ client, tableName }).read("general");
    expect(stored.map((m) => [m.id, m.ts, m.author])).toEqual([
      ["1", Date.UTC(2025, 2, 3, 8), "ana"],
      ["2", 1741000000000, undefined],
    ]);
  });
});
