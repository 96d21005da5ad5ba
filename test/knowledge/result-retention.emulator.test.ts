import { GetCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { documentClient } from "convoseg/dynamodb";
import { Analyzer } from "convoseg/extraction";
import { DynamoDbResultStore, type SegmentResult } from "convoseg/knowledge/store";
import { promptVersionOf, SegmentExtractor } from "convoseg/knowledge/write";
import { beforeAll, describe, expect, it } from "vitest";
import { widenSpans } from "../../lib/knowledge/store/redaction-store.js";
import type { RedactionTable } from "../../lib/knowledge/store/redaction-table.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { closedAfterEach, startChatCompletionsServer } from "../support/llm-servers.js";
import {
  ANALYSIS,
  answerTopics,
  createResultsTestTable,
  openAI,
  segmentOf,
  TEN_TEXTS,
} from "./fixtures.js";

const DAY = 86_400_000;
const client = testDynamoDbClient();
const startServer = closedAfterEach(startChatCompletionsServer);
let tableName: string;

beforeAll(async () => {
  tableName = await createResultsTestTable(client);
});

/** Every item of the channel's partition as stored: its sort key and expiresAt. */
async function expiries(channel: string): Promise<Map<string, unknown>> {
  const { Items = [] } = await documentClient(client).send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: "channel = :c",
      ExpressionAttributeValues: { ":c": channel },
      ConsistentRead: true,
    }),
  );
  return new Map(Items.map((item) => [String(item.item), item.expiresAt]));
}

async function extractWith(
  channel: string,
  now: number,
  resultRetentionMs?: number,
  segmentId = "s",
  texts: readonly string[] = TEN_TEXTS,
) {
  const server = await startServer(answerTopics);
  const extractor = new SegmentExtractor({
    store: new DynamoDbResultStore({ client, tableName }),
    extractor: new Analyzer(openAI(server.url), { ...ANALYSIS, maxConcurrency: 1 }),
    model: "test-model",
    promptVersion: promptVersionOf(ANALYSIS),
    now: () => now,
    resultRetentionMs,
  });
  const { segment, messages } = segmentOf(segmentId, texts, channel);
  await extractor.extract(segment, messages);
  return { segment, items: await expiries(channel) };
}

const kinds = (items: Map<string, unknown>, prefix: string) =>
  [...items].filter(([key]) => key.startsWith(prefix)).map(([, expiresAt]) => expiresAt);

describe("result retention", () => {
  it("expires the result and its topic entries by the segment's first message, windows no later", async () => {
    const now = Date.UTC(2026, 0, 3, 12);
    const { segment, items } = await extractWith("short", now, 5 * DAY);
    const byFirst = Math.floor((segment.first.ts + 5 * DAY) / 1000);
    expect(kinds(items, "result#")).toEqual([byFirst]);
    const topics = kinds(items, "topic#");
    expect(topics.length).toBeGreaterThan(0);
    expect(new Set(topics)).toEqual(new Set([byFirst]));
    // Sooner than the windows' own 15 days: they go with the result.
    const windows = kinds(items, "window#");
    expect(windows.length).toBeGreaterThan(0);
    expect(new Set(windows)).toEqual(new Set([byFirst]));
  });

  it("keeps window replies their 15 days when the result retention is longer", async () => {
    const now = Date.UTC(2026, 0, 3, 12);
    const { segment, items } = await extractWith("long", now, 400 * DAY);
    expect(kinds(items, "result#")).toEqual([Math.floor((segment.first.ts + 400 * DAY) / 1000)]);
    expect(new Set(kinds(items, "window#"))).toEqual(new Set([Math.ceil((now + 15 * DAY) / 1000)]));
  });

  it("moves an expiry already past up to the write, where DynamoDB's TTL still takes it", async () => {
    const now = Date.UTC(2033, 0, 1);
    const { items } = await extractWith("imported", now, 30 * DAY);
    expect(kinds(items, "result#")).toEqual([Math.floor(now / 1000)]);
    expect(new Set(kinds(items, "topic#"))).toEqual(new Set([Math.floor(now / 1000)]));
  });

  it("writes no expiry on results and topic entries without a retention", async () => {
    const { items } = await extractWith("forever", Date.UTC(2026, 0, 3));
    expect(kinds(items, "result#")).toEqual([undefined]);
    expect(new Set(kinds(items, "topic#"))).toEqual(new Set([undefined]));
  });

  it("keeps a result's span item, and the channel's span widths, after the result expires", async () => {
    const now = Date.UTC(2026, 0, 3, 12);
    const { segment, items } = await extractWith("spans", now, 400 * DAY, "a");
    // The result expires; its span stays, the way to what it counted into the term statistics.
    expect(kinds(items, "result#")).toEqual([Math.floor((segment.first.ts + 400 * DAY) / 1000)]);
    expect(kinds(items, "span#")).toEqual([undefined]);
    expect(items.has("spanwidths")).toBe(true);
    expect(items.get("spanwidths")).toBeUndefined();
  });

  it("takes off the span widths' expiry an older version wrote", async () => {
    const now = Date.UTC(2026, 0, 3, 12);
    await extractWith("older", now, 30 * DAY, "a");
    await documentClient(client).send(
      new UpdateCommand({
        TableName: tableName,
        Key: { channel: "older", item: "spanwidths" },
        UpdateExpression: "SET expiresAt = :e",
        ExpressionAttributeValues: { ":e": 1_800_000_000 },
      }),
    );
    const after = await extractWith("older", now, 30 * DAY, "b", TEN_TEXTS.slice(0, 2));
    expect(after.items.has("spanwidths")).toBe(true);
    expect(after.items.get("spanwidths")).toBeUndefined();
  });
});

describe("span widths written at once", () => {
  it("end at the widest span, whatever the order of the writers", async () => {
    const table = { documents: documentClient(client), tableName } as RedactionTable;
    const widths = [3, 9, 1, 7, 5, 2, 8, 4];
    const expiries = [50, 20, 80, 10, 70, 30, 60, 40];
    await Promise.all(
      widths.map((width, i) =>
        widenSpans(table, {
          channel: "racing",
          segmentId: `s${i}`,
          late: false,
          first: { id: "a", ts: 1000 },
          last: { id: "b", ts: 1000 + width },
          expiresAt: 1_800_000_000 + expiries[i],
        } as SegmentResult),
      ),
    );
    const { Item } = await documentClient(client).send(
      new GetCommand({ TableName: tableName, Key: { channel: "racing", item: "spanwidths" } }),
    );
    expect(Item).toMatchObject({ onTimeWidth: 9 });
    expect(Item?.expiresAt).toBeUndefined();
    expect(Item?.lateWidth).toBeUndefined();
  });
});
