import { DeleteItemCommand, paginateScan, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { dynamoDbApiSources } from "convoseg/api";
import { createMessagesTable } from "convoseg/history/dynamodb";
import { DELETED, PARTITION_KEY, POSITION, SORT_KEY } from "convoseg/history/schema";
import {
  IngestClient,
  type LambdaStreamRecord,
  MessageCounts,
  messageStreamRecords,
} from "convoseg/ingest";
import { channelItemKey, createChannelsTable, MARKS_ITEM } from "convoseg/pipeline/schema";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { testDynamoDbClient } from "../../support/dynamodb.js";
import { enableStream, streamRecords } from "../../support/dynamodb-streams.js";

const client = testDynamoDbClient();
const suffix = Date.now().toString(36);
const messagesTable = `counts-${suffix}`;
const channelsTable = `counts-${suffix}-channels`;
let records: LambdaStreamRecord[] = [];
let expected = new Map<string, number>();

/** What `channels` counts in the local workspace: items with a position, not marked deleted. */
async function keptByScan(): Promise<Map<string, number>> {
  const kept = new Map<string, number>();
  for await (const page of paginateScan({ client }, { TableName: messagesTable })) {
    for (const raw of page.Items ?? []) {
      const item = unmarshall(raw);
      if (item[POSITION] === undefined || item[DELETED] === true) continue;
      const channel = String(item[PARTITION_KEY]);
      kept.set(channel, (kept.get(channel) ?? 0) + 1);
    }
  }
  return kept;
}

const countsNow = async (channels: readonly string[]) => {
  const sources = dynamoDbApiSources({
    client,
    resultsTable: "unused",
    channelsTable,
    messagesTable,
  });
  const found = new Map<string, number | null>();
  for (const channel of channels) found.set(channel, (await sources.describe(channel)).messages);
  return found;
};

const forgetCounts = (channel: string) =>
  client.send(
    new UpdateItemCommand({
      TableName: channelsTable,
      Key: channelItemKey(channel, MARKS_ITEM),
      UpdateExpression: "REMOVE messages, countedTo",
    }),
  );

const channelOf = (record: LambdaStreamRecord) =>
  (record.dynamodb?.Keys?.[PARTITION_KEY] as { S?: string } | undefined)?.S;

beforeAll(async () => {
  await createMessagesTable(client, messagesTable);
  await createChannelsTable(client, channelsTable);
  const streamArn = await enableStream(client, messagesTable);
  const ingestion = new IngestClient({ messagesTable, channelsTable, client });
  const line = (channel: string, id: number) => ({
    id,
    ts: 1741000000000 + id * 60_000,
    channel,
    user: `u${id % 3}`,
    text: `line ${id}`,
  });
  const lines = [
    ...Array.from({ length: 12 }, (_, i) => line("general", i + 1)),
    ...Array.from({ length: 7 }, (_, i) => line("random", i + 101)),
  ];
  await ingestion.ingest(lines);
  // A repeat stores nothing, so the stream says nothing of it.
  expect((await ingestion.ingest(lines.slice(0, 4))).unchanged).toEqual([0, 1, 2, 3]);
  await ingestion.ingest([
    { op: "edit", id: 2, channel: "general", text: "line 2, edited", editedAt: 1741999999000 },
    { op: "delete", id: 3, channel: "general" },
    { op: "delete", id: 4, channel: "general" },
    { op: "delete", id: 102, channel: "random" },
    // Deleted before it arrives: a held deletion (no position), and the message is refused.
    { op: "delete", id: 13, channel: "general" },
  ]);
  expect((await ingestion.ingest([line("general", 13)])).stored).toEqual([]);
  // An erasure's or retention's delete of a kept message, and of a deleted one.
  const remove = (channel: string, id: number) =>
    client.send(
      new DeleteItemCommand({
        TableName: messagesTable,
        // A message with a platform id is kept under `m#<id>`.
        Key: { [PARTITION_KEY]: { S: channel }, [SORT_KEY]: { S: `m#${id}` } },
      }),
    );
  await remove("random", 103);
  await remove("general", 3);
  records = await streamRecords(streamArn);
  expected = await keptByScan();
});

describe("MessageCounts on the messages table's stream", () => {
  it("counts what the workspace's channels command counts, whatever the batches and retries", async () => {
    expect(expected.get("general")).toBe(12 - 2);
    expect(expected.get("random")).toBe(7 - 2);
    const counter = new MessageCounts({ client, tableName: channelsTable });
    const changes = messageStreamRecords(records);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: changes.length }), { maxLength: 6 }),
        fc.array(fc.constantFrom("partial", "again", "wider", "once"), {
          minLength: 8,
          maxLength: 8,
        }),
        async (cuts, faults) => {
          await forgetCounts("general");
          await forgetCounts("random");
          const ends = [...new Set([...cuts, changes.length])].sort((a, b) => a - b);
          let from = 0;
          for (const [at, end] of ends.entries()) {
            const batch = changes.slice(from, end);
            const fault = faults[at % faults.length];
            // A crash after some channels were counted, then Lambda's retry of the whole batch.
            if (fault === "partial") {
              await counter.apply(batch.filter((r) => r.keys[PARTITION_KEY]?.S === "general"));
            }
            await counter.apply(batch);
            // A lost answer: the same batch again.
            if (fault === "again") await counter.apply(batch);
            // A retry from an earlier checkpoint that reaches further than the first try.
            if (fault === "wider") await counter.apply(changes.slice(Math.max(0, from - 3), end));
            from = end;
          }
          const counted = await countsNow(["general", "random"]);
          expect(Object.fromEntries(counted)).toEqual(Object.fromEntries(expected));
        },
      ),
      { numRuns: 12 },
    );
  });

  it("leaves a deleted channel deleted: its messages' removals do not bring its marks back", async () => {
    const counter = new MessageCounts({ client, tableName: channelsTable });
    const channel = "random";
    await client.send(
      new DeleteItemCommand({ TableName: channelsTable, Key: channelItemKey(channel, MARKS_ITEM) }),
    );
    const report = await counter.apply(
      messageStreamRecords(records.filter((r) => channelOf(r) === channel)),
    );
    expect(report.dropped).toBeGreaterThan(0);
    expect((await countsNow([channel])).get(channel)).toBeNull();
  });
});
