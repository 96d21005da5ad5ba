/**
 * The deployed search index end to end, on DynamoDB Local and LanceDB in a directory (the
 * stack's `s3://` URI in AWS): the extract function indexes each stored result, the api function
 * answers GET /search from it, and an erasure leaves no document of the person, on disk included.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyStructuredResultV2,
  Context,
} from "aws-lambda";
import { dynamoDbErasure, eraseUser } from "convoseg/erasure";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { createChannelsTable } from "convoseg/pipeline/schema";
import { deployedSearchIndex, deployedSearchIndexer } from "convoseg/search/lancedb";
import { describe, expect, it, vi } from "vitest";
import { hashingEmbedding } from "../../bench/search/embed-server.js";
import {
  createMessagesTestTable,
  createResultsTestTable,
  segmentOf,
  TEN_TEXTS,
} from "../knowledge/fixtures.js";
import { NOW } from "../knowledge/redaction.js";
import { AUDIT_SECRET, buildWorld, HOUR } from "../lifecycle/erasure/world.js";
import { stubLocalAws } from "../support/aws-env.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { startInvokeModelServer } from "../support/llm-servers.js";
import { sqsEvent } from "../support/sqs.js";

const client = testDynamoDbClient();

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

const searchEvent = (rawQueryString: string) =>
  ({
    routeKey: "GET /search",
    rawPath: "/search",
    rawQueryString,
    headers: {},
    requestContext: { http: { method: "GET" } },
  }) as unknown as APIGatewayProxyEventV2;

async function loadHandlers(environment: Record<string, string>) {
  vi.resetModules();
  stubLocalAws();
  for (const [name, value] of Object.entries(environment)) vi.stubEnv(name, value);
  vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "true");
  const extract = (await import("../../functions/extract/handler.js")).handler;
  const api = (await import("../../functions/api/handler.js")).handler;
  return {
    extract,
    search: async (query: string) => {
      const response = (await api(searchEvent(query))) as APIGatewayProxyStructuredResultV2;
      return { status: response.statusCode, body: JSON.parse(response.body as string) };
    },
  };
}

describe("the deployed search index", () => {
  it("is written by the extract function and read by the api function; off without its setting", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "convoseg-deployed-search-")), "index");
    const resultsTable = await createResultsTestTable(client);
    const messagesTable = await createMessagesTestTable(client);
    const channelsTable = `channels-${randomUUID()}`;
    await createChannelsTable(client, channelsTable);
    const tables = {
      RESULTS_TABLE: resultsTable,
      MESSAGES_TABLE: messagesTable,
      CHANNELS_TABLE: channelsTable,
      EXTRACTOR: "offline",
    };
    const off = await loadHandlers(tables);
    expect((await off.search("q=grub")).status).toBe(501);

    const { extract, search } = await loadHandlers({ ...tables, SEARCH_INDEX_URI: dir });
    const { segment, messages } = segmentOf("s1", TEN_TEXTS, "help");
    const body = JSON.stringify({
      v: 1,
      ...segment,
      messageIds: messages.map((m) => m.id),
      messages,
    });
    expect((await extract(sqsEvent([body]), {} as Context)).batchItemFailures).toEqual([]);
    const found = await search("q=reinstalling+grub&channel=help");
    expect(found.status).toBe(200);
    const hits = found.body.hits as { id: string; kind: string; evidence: string[] }[];
    expect(hits.map((h) => h.kind)).toContain("message");
    expect(hits.find((h) => h.kind === "message")?.evidence).toEqual(["s1-m1"]);
    expect(hits.some((h) => h.kind === "conversation")).toBe(true);
    // Delivered again (SQS at least once): found stored, indexed again, nothing doubled.
    expect((await extract(sqsEvent([body]), {} as Context)).batchItemFailures).toEqual([]);
    const again = await search("q=reinstalling+grub&channel=help");
    expect(again.body.hits.map((h: { id: string }) => h.id)).toEqual(hits.map((h) => h.id));
    const messagesOnly = await search("q=grub&kind=message&limit=50");
    expect(messagesOnly.body.hits, JSON.stringify(messagesOnly.body)).toHaveLength(3);
  }, 120_000);

  it("with SEARCH_EMBEDDINGS_MODEL, is written with vectors and GET /search ranks hybrid", async () => {
    // Titan on a scripted Bedrock runtime: the hashing model, "wireless" read as "wifi".
    const titan = await startInvokeModelServer((request) => {
      const { inputText } = request.body as { inputText: string };
      const embedding = hashingEmbedding(inputText.replace(/\bwireless\b/gi, "wifi"));
      return { body: { embedding, inputTextTokenCount: 3 } };
    });
    try {
      const dir = join(mkdtempSync(join(tmpdir(), "convoseg-deployed-hybrid-")), "index");
      const tables = {
        RESULTS_TABLE: await createResultsTestTable(client),
        MESSAGES_TABLE: await createMessagesTestTable(client),
        CHANNELS_TABLE: `channels-${randomUUID()}`,
        EXTRACTOR: "offline",
        SEARCH_INDEX_URI: dir,
      };
      await createChannelsTable(client, tables.CHANNELS_TABLE);
      const hybrid = {
        ...tables,
        SEARCH_EMBEDDINGS_MODEL: "amazon.titan-embed-text-v2:0",
        AWS_ENDPOINT_URL_BEDROCK_RUNTIME: titan.url,
      };
      const { extract, search } = await loadHandlers(hybrid);
      const { segment, messages } = segmentOf("s1", TEN_TEXTS, "help");
      const body = JSON.stringify({
        v: 1,
        ...segment,
        messageIds: messages.map((m) => m.id),
        messages,
      });
      expect((await extract(sqsEvent([body]), {} as Context)).batchItemFailures).toEqual([]);
      const written = titan.requests.length;
      expect(written).toBeGreaterThan(TEN_TEXTS.length);
      expect(titan.requests[0]?.path).toBe(
        `/model/${encodeURIComponent("amazon.titan-embed-text-v2:0")}/invoke`,
      );
      // No word of the query is in the channel: only the vectors find the wifi messages.
      const found = await search("q=wireless&kind=message&channel=help");
      expect(found.status).toBe(200);
      const ids = (found.body.hits as { id: string }[]).map((h) => h.id);
      const wifi = ["s1-m4", "s1-m5", "s1-m7"].map((id) => `message:help:${id}`);
      expect(wifi).toEqual(expect.arrayContaining(ids.slice(0, 2)));
      expect(ids).toEqual(expect.arrayContaining(wifi));
      expect(titan.requests.length).toBe(written + 1);
      // Without the model the same index is searched by its words.
      const words = await loadHandlers({ ...tables, SEARCH_EMBEDDINGS_MODEL: "" });
      expect((await words.search("q=wireless&kind=message")).body.hits).toEqual([]);
      expect((await words.search("q=wifi+power&kind=message")).body.hits.length).toBeGreaterThan(0);
    } finally {
      await titan.close();
    }
  }, 120_000);

  it("keeps no document of an erased person, nor any older version of one on disk", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "convoseg-deployed-erase-")), "index");
    const messagesTable = await createMessagesTestTable(client);
    const resultsTable = await createResultsTestTable(client);
    const channelsTable = `channels-${randomUUID()}`;
    await createChannelsTable(client, channelsTable);
    const history = new DynamoDbStore({ client, tableName: messagesTable });
    const results = new DynamoDbResultStore({ client, tableName: resultsTable });
    const world = await buildWorld(history, results, { channels: 2, segments: 2, prefix: "s" });
    const tables = { client, messagesTable, resultsTable };
    const indexer = deployedSearchIndexer({ uri: dir, ...tables });
    if (indexer === undefined) throw new Error("no indexer");
    const reader = new KnowledgeReader({ client, tableName: resultsTable });
    for (const channel of world.channels)
      for (const result of await reader.results(channel)) await indexer.stored(result);
    const index = deployedSearchIndex({ uri: dir });
    const carols = [...world.written.values()].flat().filter((m) => m.author === "carol");
    const someone = [...world.written.values()].flat().find((m) => m.author === "alice");
    if (someone === undefined || carols.length === 0) throw new Error("no world");
    const onDisk = (text: string) => filesUnder(dir).some((f) => readFileSync(f).includes(text));
    expect(carols.every((m) => onDisk(m.text))).toBe(true);
    const words = (text: string) => text.replace(/#/g, "");
    expect(
      (await index?.search({ text: words(carols[0].text), limit: 100 }))?.length,
    ).toBeGreaterThan(0);

    const outcome = await eraseUser(
      dynamoDbErasure(
        { ...tables, channelsTable, auditSecret: AUDIT_SECRET },
        { now: () => NOW + 100 * HOUR, search: indexer },
      ),
      { user: "carol", allChannels: true, requestedBy: "dpo" },
    );
    expect(outcome).toMatchObject({ done: true, counts: { messages: carols.length } });
    for (const m of carols) expect(onDisk(m.text), m.text).toBe(false);
    const all = await index?.search({ text: "grub wifi intel anyone", limit: 100 });
    expect(all?.filter((h) => h.author === "carol")).toEqual([]);
    const gone = new Set(carols.map((m) => m.id));
    for (const hit of all ?? []) expect(hit.evidence.filter((id) => gone.has(id))).toEqual([]);
    // Everyone else's messages are still found.
    expect(onDisk(someone.text)).toBe(true);
    const theirs = await index?.search({ text: words(someone.text), kinds: ["message"] });
    expect(theirs?.map((h) => h.evidence[0])).toContain(someone.id);
  }, 180_000);
});
