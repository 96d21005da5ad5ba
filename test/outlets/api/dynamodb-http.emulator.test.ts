/**
 * The read API over a real HTTP server on 127.0.0.1 (cli/serve/serve-http.ts), on DynamoDB Local:
 * the DynamoDB sources give the pages the memory ones give, each request one bounded read,
 * cursors and ETags over the wire, hostile paths refused.
 */

import { randomUUID } from "node:crypto";
import { UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import {
  type ApiSources,
  apiHandler,
  dynamoDbApiSources,
  memoryApiSources,
  type ReadCost,
} from "convoseg/api";
import { textMessage } from "convoseg/history";
import { createMessagesTable, DynamoDbStore } from "convoseg/history/dynamodb";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { channelItemKey, channelsTableDefinition, MARKS_ITEM } from "convoseg/pipeline/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seededChannel, writeSeededChannel } from "../../../bench/api-seed.js";
import { type ApiServer, isLoopback, startApiServer } from "../../../cli/serve/serve-http.js";
import { createResultsTestTable } from "../../knowledge/fixtures.js";
import { question, resultWith, save } from "../../knowledge/question-index.js";
import { createTestTable, testDynamoDbClient } from "../../support/dynamodb.js";

const seeded = seededChannel("help", 600, 120);
const T = Date.UTC(2026, 4, 1);
/** Chat text is hostile: it must come back as the JSON string it is, nothing more. */
const HOSTILE = '</script><b onclick="x">reboot</b>\u001b[2J';
const costs: ReadCost[] = [];
let sources: ApiSources;
let server: ApiServer;
let memory: ApiServer;

beforeAll(async () => {
  const client = testDynamoDbClient();
  const resultsTable = await createResultsTestTable(client);
  const { TableName: _, ...channels } = channelsTableDefinition("unused");
  const channelsTable = await createTestTable(client, channels, "channels");
  await writeSeededChannel(client, { resultsTable, channelsTable }, "help", seeded);
  await writeSeededChannel(client, { resultsTable, channelsTable }, "dev", {
    supports: [],
    results: [],
  });
  const messagesTable = `messages-${randomUUID()}`;
  await createMessagesTable(client, messagesTable);
  const messages = new DynamoDbStore({ client, tableName: messagesTable });
  await messages.write("help", [
    textMessage("user", "first, then deleted", { id: "m1", ts: T - 3, platform: "slack" }),
    textMessage("user", "before the rename", { id: "m2", ts: T - 2, channelName: "helpdesk" }),
    textMessage("user", "after it", {
      id: "m3",
      ts: T - 1,
      channelName: "help",
      platform: "slack",
    }),
  ]);
  await messages.change("help", { kind: "delete", id: "m1" });
  // The count the stream's counter keeps on the marks item (test/intake/ingest keeps it there).
  await client.send(
    new UpdateItemCommand({
      TableName: channelsTable,
      Key: channelItemKey("help", MARKS_ITEM),
      UpdateExpression: "SET messages = :two",
      ExpressionAttributeValues: { ":two": { N: "2" } },
    }),
  );
  const store = new DynamoDbResultStore({ client, tableName: resultsTable });
  for (let s = 0; s < 3; s++) {
    const questions = [0, 1].map((q) => question(`q${s}${q}`, T + 10 * q + s));
    questions.push(question(`a${s}`, T + s, "answered", { answer: HOSTILE, answerIds: ["m2"] }));
    await save(store, resultWith("qa", `seg-${s}`, questions, { thread: `root-${s}` }));
  }
  sources = dynamoDbApiSources({
    client,
    resultsTable,
    channelsTable,
    messagesTable,
    onRead: (cost) => costs.push(cost),
    questions: new KnowledgeReader({ client, tableName: resultsTable }),
  });
  server = await startApiServer({ handler: apiHandler(sources), host: "127.0.0.1", port: 0 });
  memory = await startApiServer({
    handler: apiHandler(memoryApiSources({ channels: ["dev", "help"], ...seeded })),
    host: "127.0.0.1",
    port: 0,
  });
});

afterAll(async () => {
  await server?.close();
  await memory?.close();
});

async function walk(base: string, path: string) {
  const pages: { status: number; body: { cursor: string | null } & Record<string, unknown> }[] = [];
  let cursor: string | null = null;
  do {
    const url = `${base}${path}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`;
    const response = await fetch(url);
    const body = (await response.json()) as { cursor: string | null } & Record<string, unknown>;
    pages.push({ status: response.status, body });
    cursor = body.cursor;
  } while (cursor !== null && pages.length < 1000);
  return pages;
}

describe("the read API over HTTP on DynamoDB Local", () => {
  it("pages the topic index in key order as the memory sources do, one Query per page", async () => {
    costs.length = 0;
    const pages = await walk(server.url, "/channels/help/topics?sort=key&limit=7");
    const expected = await walk(memory.url, "/channels/help/topics?sort=key&limit=7");
    expect(pages.map((p) => p.status).every((s) => s === 200)).toBe(true);
    expect(pages.map((p) => p.body.topics)).toEqual(expected.map((p) => p.body.topics));
    expect(costs.map((c) => c.operation)).toEqual(pages.map(() => "Query"));
    expect(costs.every((c) => c.units > 0)).toBe(true);
    const topics = pages.flatMap((p) => p.body.topics as { normalizedTopic: string }[]);
    expect(new Set(topics.map((t) => t.normalizedTopic)).size).toBe(120);
  });

  it("ranks the whole topic index as the memory sources do", async () => {
    costs.length = 0;
    const pages = await walk(server.url, "/channels/help/topics?limit=50");
    const expected = await walk(memory.url, "/channels/help/topics?limit=50");
    expect(pages.map((p) => p.body)).toEqual(expected.map((p) => p.body));
    expect(pages[0].body).toMatchObject({ sort: "support", complete: true });
    // 600 entries fit one Query page: each page of topics reads the index once.
    expect(costs.map((c) => c.operation)).toEqual(pages.map(() => "Query"));
  });

  it("reads the topic index whole up to its bound, over Query pages", async () => {
    const [all, cut] = await Promise.all([
      sources.topicIndex("help", { max: 600 }),
      sources.topicIndex("help", { max: 250 }),
    ]);
    const inMemory = memoryApiSources(seeded);
    expect(all).toEqual(await inMemory.topicIndex("help", { max: 600 }));
    expect(cut).toEqual(await inMemory.topicIndex("help", { max: 250 }));
    expect([all.entries.length, all.more, cut.entries.length, cut.more]).toEqual([
      600,
      false,
      250,
      true,
    ]);
  });

  it("lists channels with their names, platforms, counts and times: one Scan, two Queries and a GetItem a channel", async () => {
    costs.length = 0;
    const channels = await walk(server.url, "/channels?limit=1");
    const listed = channels.flatMap((p) => p.body.channels as { channel: string }[]);
    expect(channels.every((p) => (p.body.channels as unknown[]).length <= 1)).toBe(true);
    expect(listed.filter((c) => c.channel === "help" || c.channel === "dev")).toEqual([
      // m1 was sent first and deleted: the first kept message is m2.
      { channel: "dev", name: null, platform: null, messages: null, first: null, last: null },
      { channel: "help", name: "help", platform: "slack", messages: 2, first: T - 2, last: T - 1 },
    ]);
    expect(costs.filter((c) => c.operation === "Scan")).toHaveLength(channels.length);
    expect(costs.filter((c) => c.operation === "Query")).toHaveLength(2 * listed.length);
    expect(costs.filter((c) => c.operation === "GetItem")).toHaveLength(listed.length);
  });

  it("reads a segment with one GetItem", async () => {
    costs.length = 0;
    const id = seeded.results[0].segmentId;
    const response = await fetch(`${server.url}/channels/help/segments/${id}`);
    expect(await response.json()).toMatchObject({
      segmentId: id,
      messageIds: seeded.results[0].messageIds,
    });
    expect(costs.map((c) => c.operation)).toEqual(["GetItem"]);
  });

  it("answers 304 to the ETag it sent, and refuses a forged cursor before any read", async () => {
    const first = await fetch(`${server.url}/channels/help/topics?limit=3`);
    const etag = first.headers.get("etag") as string;
    const again = await fetch(`${server.url}/channels/help/topics?limit=3`, {
      headers: { "If-None-Match": etag },
    });
    expect([again.status, again.headers.get("etag")]).toEqual([304, etag]);
    costs.length = 0;
    const forged = await fetch(
      `${server.url}/channels/help/topics?cursor=W1sxXQ.AAAAAAAAAAAAAAAAAAAAAA`,
    );
    expect([
      forged.status,
      ((await forged.json()) as { error: { parameter: string } }).error.parameter,
    ]).toEqual([400, "cursor"]);
    expect(costs).toEqual([]);
  });

  it("pages a channel's unanswered questions oldest first, one Query per page", async () => {
    costs.length = 0;
    const pages = await walk(server.url, "/channels/qa/questions?status=unanswered&limit=4");
    expect(pages.map((p) => p.status)).toEqual([200, 200]);
    expect(costs.map((c) => c.operation)).toEqual(["Query", "Query"]);
    // Each page's Query reports the read units it consumed (for ApiReadUnits), as topics do.
    for (const cost of costs) expect(cost.units).toBeGreaterThan(0);
    const listed = pages.flatMap((p) => p.body.questions as { askedId: string; askedTs: number }[]);
    expect(listed.map((q) => q.askedId)).toEqual(
      ["q00", "q10", "q20", "q01", "q11", "q21"].map((id) => `m-${id}`),
    );
    expect(listed.map((q) => q.askedTs)).toEqual(
      listed.map((q) => q.askedTs).sort((a, b) => a - b),
    );
    const answered = await fetch(`${server.url}/channels/qa/questions?status=answered&limit=1`);
    expect(answered.headers.get("content-type")).toMatch(/^application\/json/);
    const page = (await answered.json()) as { questions: unknown[] };
    expect(page.questions).toEqual([
      {
        id: "a0",
        question: "how do I fix a0?",
        askedId: "m-a0",
        askedTs: T,
        askedBy: "ann",
        status: "answered",
        answer: HOSTILE,
        answerIds: ["m2"],
        segmentId: "seg-0",
        threadId: "root-0",
      },
    ]);
    const all = await walk(server.url, "/channels/qa/questions?limit=100");
    expect(all.flatMap((p) => p.body.questions as unknown[])).toHaveLength(9);
    const bad = await fetch(`${server.url}/channels/qa/questions?status=open`);
    expect(bad.status).toBe(400);
  });

  it("refuses hostile paths with a 400 or 404, and never anything but GET", async () => {
    const bad = await fetch(`${server.url}/channels/%00x/topics`);
    expect(bad.status).toBe(400);
    const unknown = await fetch(`${server.url}/channels/help/digests?since=7d`);
    expect(unknown.status).toBe(404);
    const undigested = await fetch(`${server.url}/channels/help/digest?since=7d`);
    expect(undigested.status).toBe(501);
    const post = await fetch(`${server.url}/channels`, { method: "POST", body: "x" });
    expect(post.status).toBe(405);
  });
});

describe("serve's host", () => {
  it("takes loopback addresses only", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "localhost"])
      expect(isLoopback(host)).toBe(true);
    for (const host of ["0.0.0.0", "::", "192.168.1.2", "127.0.0.256", "localhost.evil.com"]) {
      expect(isLoopback(host)).toBe(false);
    }
  });
});
