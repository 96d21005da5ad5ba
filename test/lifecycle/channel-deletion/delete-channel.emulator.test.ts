import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { PutCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { deleteChannel } from "convoseg/channel-deletion";
import { documentClient } from "convoseg/dynamodb";
import { KeyphraseExtractor } from "convoseg/extraction/offline";
import { createMessagesTable } from "convoseg/history/dynamodb";
import { IngestClient } from "convoseg/ingest";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { promptVersionOf, SegmentExtractor } from "convoseg/knowledge/write";
import { createChannelsTable } from "convoseg/pipeline/schema";
import { describe, expect, inject, it } from "vitest";
import { CHAT_ANALYSIS, createResultsTestTable, segmentOf } from "../../knowledge/fixtures.js";

/** A client whose first BatchWriteItem on `failing` throws, as a crash there would end a run. */
function clientFailingOnce(failing: () => string | undefined) {
  const client = new DynamoDBClient({
    endpoint: inject("dynamodbEndpoint"),
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
  });
  let failed = false;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = (args as { input: { RequestItems?: Record<string, unknown> } }).input;
      const table = failing();
      if (
        !failed &&
        context.commandName === "BatchWriteItemCommand" &&
        table &&
        input.RequestItems?.[table]
      ) {
        failed = true;
        throw Object.assign(new Error("injected crash"), { name: "InjectedCrash" });
      }
      return next(args);
    },
    { step: "initialize", name: "crashOnce" },
  );
  return client;
}

/** Three tables holding two channels: messages, marks, results and topic entries of each. */
async function channelsOf(client: DynamoDBClient, channels: readonly string[]) {
  const suffix = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  const tables = {
    messagesTable: `lifecycle-messages-${suffix}`,
    channelsTable: `lifecycle-channels-${suffix}`,
    resultsTable: await createResultsTestTable(client),
  };
  await createMessagesTable(client, tables.messagesTable);
  await createChannelsTable(client, tables.channelsTable);
  const ingestion = new IngestClient({ client, ...tables });
  const extractor = new SegmentExtractor({
    store: new DynamoDbResultStore({ client, tableName: tables.resultsTable }),
    extractor: new KeyphraseExtractor(),
    model: "offline",
    promptVersion: promptVersionOf(CHAT_ANALYSIS),
  });
  for (const channel of channels) {
    const texts = ["the grub bootloader broke", "reinstall the grub bootloader", "grub works"];
    const { segment, messages } = segmentOf("s0", texts, channel);
    const result = await ingestion.ingest(messages.map((m) => ({ ...m, channel })));
    expect(result.stored).toHaveLength(texts.length);
    await extractor.extract(segment, messages);
  }
  return tables;
}

/** How many items of each table belong to each partition, by a full scan. */
async function census(client: DynamoDBClient, tables: Record<string, string>) {
  const documents = documentClient(client);
  const found: Record<string, Record<string, number>> = {};
  for (const [role, table] of Object.entries(tables)) {
    const { Items = [] } = await documents.send(new ScanCommand({ TableName: table }));
    found[role] = {};
    for (const item of Items) {
      const partition = String(item.conversation ?? item.channel);
      found[role][partition] = (found[role][partition] ?? 0) + 1;
    }
  }
  return found;
}

describe("deleteChannel", () => {
  it("counts on a dry run, then removes every item of the channel and nothing of another", async () => {
    const client = clientFailingOnce(() => undefined);
    const tables = await channelsOf(client, ["ops", "desk"]);
    const before = await census(client, tables);

    const counted = await deleteChannel({ client, ...tables, channel: "ops", dryRun: true });
    expect(await census(client, tables)).toEqual(before);
    expect(counted.map((c) => c.name)).toEqual(["channel state", "messages", "results"]);
    expect(counted.map((c) => c.items)).toEqual([
      before.channelsTable.ops,
      3,
      before.resultsTable.ops,
    ]);

    // The results are told by the registry's kinds, every one of them a registered kind.
    const kinds = counted[2].kinds ?? {};
    expect(kinds).toMatchObject({ "segment results": 1, "segment spans": 1, "span widths": 1 });
    expect(kinds).not.toHaveProperty("unregistered items");
    expect(Object.values(kinds).reduce((a, b) => a + b, 0)).toBe(counted[2].items);

    const removed = await deleteChannel({ client, ...tables, channel: "ops" });
    expect(removed).toEqual(counted);
    const after = await census(client, tables);
    for (const role of Object.keys(tables)) {
      expect(after[role], role).not.toHaveProperty("ops");
      expect(after[role].desk, role).toBe(before[role].desk);
    }
    // Repeated after a complete run: nothing left to find.
    const again = await deleteChannel({ client, ...tables, channel: "ops" });
    expect(again.map((c) => c.items)).toEqual([0, 0, 0]);
  });

  it("finishes on a second run what a crash interrupted, leaving no state that would deliver it", async () => {
    let failing: string | undefined;
    const client = clientFailingOnce(() => failing);
    const tables = await channelsOf(client, ["ops", "desk"]);
    const before = await census(client, tables);
    failing = tables.resultsTable;

    await expect(deleteChannel({ client, ...tables, channel: "ops" })).rejects.toThrow(
      "injected crash",
    );
    const midway = await census(client, tables);
    // State and messages went first: no tick delivers the channel again.
    expect(midway.channelsTable).not.toHaveProperty("ops");
    expect(midway.messagesTable).not.toHaveProperty("ops");
    expect(midway.resultsTable.ops).toBe(before.resultsTable.ops);

    const finished = await deleteChannel({ client, ...tables, channel: "ops" });
    expect(finished.map((c) => c.items)).toEqual([0, 0, before.resultsTable.ops]);
    const after = await census(client, tables);
    expect(after.resultsTable).not.toHaveProperty("ops");
    expect(after.resultsTable.desk).toBe(before.resultsTable.desk);
  });

  it("leaves a share's claim alone, though it shares a partition key with a channel id", async () => {
    const client = clientFailingOnce(() => undefined);
    const channel = "due-share/0/1";
    const tables = await channelsOf(client, [channel]);
    await documentClient(client).send(
      new PutCommand({
        TableName: tables.channelsTable,
        Item: { channel, item: "shareClaim", owner: "worker", until: 1 },
      }),
    );
    await deleteChannel({ client, ...tables, channel });
    const after = await census(client, tables);
    expect(after.channelsTable).toEqual({ [channel]: 1 });
    expect(after.messagesTable).toEqual({});
  });

  it("refuses a channel id the store would refuse, before any I/O", async () => {
    const client = clientFailingOnce(() => undefined);
    await expect(
      deleteChannel({
        client,
        messagesTable: "m",
        channelsTable: "c",
        resultsTable: "r",
        channel: " deployment",
      }),
    ).rejects.toThrow(/whitespace/);
  });
});
