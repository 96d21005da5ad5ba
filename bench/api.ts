/**
 * What a read API request costs, on DynamoDB Local: a channel with 10,000 topic entries (skewed
 * over 2,000 topics, `bench/api-seed.ts`), every page of `GET /channels/{c}/topics?sort=key`
 * walked by its cursors through the real handler and DynamoDB sources, and one page of the
 * default `sort=support`, which ranks the whole index. Per request: DynamoDB reads (always one
 * Query here) and read units (ReturnConsumedCapacity), beside the floor (the units one Query
 * returning exactly the page's entries would cost: DynamoDB's rule of 4 KB per unit, half for an
 * eventually consistent read, at least half a unit) and beside what reading the whole index
 * costs (`KnowledgeReader.topics`, every request before the API). Also one channels page, one
 * segment, and every page of `GET /channels/{c}/questions?status=unanswered` over a question
 * index of `--questions` entries.
 *
 *   npm run bench:api                          10,000 entries, 2,000 topics, pages of 20
 *   npm run bench:api -- --entries 50000 --topics 5000 --limit 100
 *   npm run bench:api -- --json                the numbers as one JSON object
 */
import type { AttributeValue, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  apiHandler,
  dynamoDbApiSources,
  QUESTION_LIMITS,
  type ReadCost,
  TOPIC_LIMITS,
} from "convoseg/api";
import { wireItemSize } from "convoseg/dynamodb";
import { createMessagesTable } from "convoseg/history/dynamodb";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { createResultsTable } from "convoseg/knowledge/store";
import { createChannelsTable } from "convoseg/pipeline/schema";
import { startEmulators } from "../local/emulators.js";
import { seededChannel, writeSeededChannel, writeSeededQuestions } from "./api-seed.js";
import { benchArgs, usageError } from "./args.js";
import { readUnits } from "./capacity.js";

const USAGE = `Usage: npm run bench:api -- [--entries N] [--topics N] [--limit N] [--questions N] [--json]

Walks every page of GET /channels/{c}/topics?sort=key on a channel of N topic index entries, on DynamoDB
Local, and reports reads and read units per request against the floor and the whole-index read.

Options:
  --entries N   topic index entries of the channel (default 10000)
  --topics N    topics they are spread over, skewed (default 2000)
  --limit N     topics per page (default ${TOPIC_LIMITS.default}, at most ${TOPIC_LIMITS.max})
  --questions N question index entries of the channel, half unanswered (default 1000)
  --json        the numbers as one JSON object
  -h, --help    this help`;

const values = benchArgs(USAGE, {
  entries: { type: "string", default: "10000" },
  topics: { type: "string", default: "2000" },
  limit: { type: "string", default: String(TOPIC_LIMITS.default) },
  questions: { type: "string", default: "1000" },
  json: { type: "boolean" },
});
const whole = (name: string, text: string, max: number) => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > max)
    usageError(USAGE, `--${name} must be a whole number from 1 to ${max}`);
  return n;
};
const entries = whole("entries", values.entries, 1_000_000);
const topics = whole("topics", values.topics, entries);
const limit = whole("limit", values.limit, TOPIC_LIMITS.max);
const questionCount = whole("questions", values.questions, 100_000);

/** Sizes of the items each Query returned, in order, as the wire carries them. */
function recordItemSizes(client: DynamoDBClient, sink: number[][]): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      const out = await next(args);
      const items = (out.output as unknown as { Items?: Record<string, AttributeValue>[] }).Items;
      if (items !== undefined) sink.push(items.map((i) => wireItemSize(i as never)));
      return out;
    },
    { step: "initialize", name: "benchItemSizes" },
  );
}

/** Every Query and Scan asks for its consumed capacity, summed into `total`. */
function recordCapacity(client: DynamoDBClient, total: { units: number; requests: number }): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = "TOTAL";
      const out = await next(args);
      const consumed = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } })
        .ConsumedCapacity;
      total.units += consumed?.CapacityUnits ?? 0;
      total.requests++;
      return out;
    },
    { step: "initialize", name: "benchCapacity" },
  );
}

const emulators = await startEmulators({ sqs: false, ignoreEnvironment: true });
try {
  const setup = emulators.dynamodb();
  const tables = {
    resultsTable: "bench-api-results",
    channelsTable: "bench-api-channels",
    messagesTable: "bench-api-messages",
  };
  await createResultsTable(setup, tables.resultsTable);
  await createMessagesTable(setup, tables.messagesTable);
  await createChannelsTable(setup, tables.channelsTable);
  const channel = "bench";
  const seeded = seededChannel(channel, entries, topics);
  await writeSeededChannel(setup, tables, channel, seeded);
  const unanswered = await writeSeededQuestions(setup, tables.resultsTable, channel, questionCount);

  const client = emulators.dynamodb();
  const sizes: number[][] = [];
  recordItemSizes(client, sizes);
  let costs: ReadCost[] = [];
  const handle = apiHandler(
    dynamoDbApiSources({
      client,
      ...tables,
      onRead: (c) => costs.push(c),
      questions: new KnowledgeReader({ client, tableName: tables.resultsTable }),
    }),
  );
  const get = (rawPath: string, rawQuery = "") =>
    handle({ method: "GET", rawPath, rawQuery, headers: {} });

  const pages: {
    reads: number;
    units: number;
    floor: number;
    returned: number;
    read: number;
    topics: number;
    partial: number;
  }[] = [];
  let cursor: string | null = null;
  const started = performance.now();
  do {
    costs = [];
    sizes.length = 0;
    const query = `sort=key&limit=${limit}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`;
    const response = await get(`/channels/${channel}/topics`, query);
    if (response.status !== 200)
      throw new Error(`page ${pages.length + 1}: ${response.status} ${response.body}`);
    const page = JSON.parse(response.body) as {
      topics: { evidence: unknown[]; partial: boolean }[];
      cursor: string | null;
    };
    const returned = page.topics.reduce((n, t) => n + t.evidence.length, 0);
    const itemSizes = sizes.flat();
    pages.push({
      reads: costs.length,
      units: costs.reduce((n, c) => n + c.units, 0),
      floor: readUnits(
        itemSizes.slice(0, returned).reduce((a, b) => a + b, 0),
        false,
      ),
      returned,
      read: itemSizes.length,
      topics: page.topics.length,
      partial: page.topics.filter((t) => t.partial).length,
    });
    cursor = page.cursor;
  } while (cursor !== null);
  const walkMs = performance.now() - started;

  // The default order ranks the whole index: what its first page costs.
  costs = [];
  await get(`/channels/${channel}/topics`, `limit=${limit}`);
  const rankedPage = { reads: costs.length, units: costs.reduce((n, c) => n + c.units, 0) };
  costs = [];
  await get("/channels", "limit=50");
  const channelsPage = {
    reads: [...new Set(costs.map((c) => c.operation))]
      .map((op) => `${costs.filter((c) => c.operation === op).length} ${op}`)
      .join(", "),
    units: costs.reduce((n, c) => n + c.units, 0),
  };
  costs = [];
  await get(`/channels/${channel}/segments/${seeded.results[0].segmentId}`);
  const segmentRead = { reads: costs.length, units: costs.reduce((n, c) => n + c.units, 0) };

  const questionPages: { reads: number; units: number; questions: number }[] = [];
  let questionsCursor: string | null = null;
  do {
    costs = [];
    const after = questionsCursor === null ? "" : `&cursor=${encodeURIComponent(questionsCursor)}`;
    const response = await get(
      `/channels/${channel}/questions`,
      `status=unanswered&limit=${QUESTION_LIMITS.default}${after}`,
    );
    if (response.status !== 200) throw new Error(`questions: ${response.status} ${response.body}`);
    const page = JSON.parse(response.body) as { questions: unknown[]; cursor: string | null };
    questionPages.push({
      reads: costs.length,
      units: costs.reduce((n, c) => n + c.units, 0),
      questions: page.questions.length,
    });
    questionsCursor = page.cursor;
  } while (questionsCursor !== null);

  const wholeIndex = { units: 0, requests: 0 };
  const readerClient = emulators.dynamodb();
  recordCapacity(readerClient, wholeIndex);
  await new KnowledgeReader({ client: readerClient, tableName: tables.resultsTable }).topics(
    channel,
    { limit },
  );

  const sum = (f: (p: (typeof pages)[number]) => number) => pages.reduce((n, p) => n + f(p), 0);
  const summary = {
    options: { entries, topics, limit },
    pages: pages.length,
    topicsReturned: sum((p) => p.topics),
    partialTopics: sum((p) => p.partial),
    entriesReturned: sum((p) => p.returned),
    entriesRead: sum((p) => p.read),
    readsPerRequest: {
      max: Math.max(...pages.map((p) => p.reads)),
      mean: sum((p) => p.reads) / pages.length,
    },
    unitsPerPage: {
      mean: sum((p) => p.units) / pages.length,
      max: Math.max(...pages.map((p) => p.units)),
    },
    floorPerPage: { mean: sum((p) => p.floor) / pages.length },
    unitsOverFloor: sum((p) => p.units) / sum((p) => p.floor),
    wholeIndexRead: wholeIndex,
    firstPageOverWholeIndex: pages[0].units / wholeIndex.units,
    rankedPage,
    channelsPage,
    segmentRead,
    questions: {
      entries: questionCount,
      unanswered,
      pages: questionPages.length,
      returned: questionPages.reduce((n, p) => n + p.questions, 0),
      readsPerRequest: { max: Math.max(...questionPages.map((p) => p.reads)) },
      unitsPerPage: {
        mean: questionPages.reduce((n, p) => n + p.units, 0) / questionPages.length,
        max: Math.max(...questionPages.map((p) => p.units)),
      },
    },
    walkMs: Math.round(walkMs),
  };
  if (values.json) console.log(JSON.stringify(summary, null, 2));
  else {
    const f = (n: number) => n.toFixed(2);
    console.log(
      `GET /channels/{c}/topics?sort=key&limit=${limit} on ${entries} entries over ${topics} topics:`,
    );
    console.log(
      `  ${summary.pages} pages, ${summary.topicsReturned} topics (${summary.partialTopics} partial), ${summary.entriesReturned} entries returned, ${summary.entriesRead} read (${f(summary.entriesRead / summary.entriesReturned)}x)`,
    );
    console.log(
      `  DynamoDB reads per request: max ${summary.readsPerRequest.max}, mean ${f(summary.readsPerRequest.mean)} (one Query)`,
    );
    console.log(
      `  read units per page: mean ${f(summary.unitsPerPage.mean)}, max ${f(summary.unitsPerPage.max)}; floor mean ${f(summary.floorPerPage.mean)}; units / floor ${f(summary.unitsOverFloor)}x`,
    );
    console.log(
      `  the whole index (KnowledgeReader.topics): ${wholeIndex.requests} Query pages, ${f(wholeIndex.units)} units; a first page costs ${f(summary.firstPageOverWholeIndex * 100)}% of it`,
    );
    console.log(
      `  GET /channels/{c}/topics?limit=${limit} (sort=support, the whole index ranked): ${rankedPage.reads} Query pages, ${f(rankedPage.units)} units`,
    );
    console.log(
      `  GET /channels (one channel): ${channelsPage.reads}, ${f(channelsPage.units)} units; GET /segments/{id}: ${segmentRead.reads} GetItem, ${f(segmentRead.units)} units`,
    );
    const q = summary.questions;
    console.log(
      `  GET /channels/{c}/questions?status=unanswered&limit=${QUESTION_LIMITS.default} on ${q.entries} question entries: ${q.pages} pages, ${q.returned} of ${q.unanswered} unanswered returned; reads per request max ${q.readsPerRequest.max} (one Query); read units per page mean ${f(q.unitsPerPage.mean)}, max ${f(q.unitsPerPage.max)}`,
    );
    console.log(`  walk: ${summary.walkMs} ms`);
  }
} finally {
  await emulators.stop();
}
