import { beforeAll, describe, expect, it } from "vitest";
import { createMessagesTable, DynamoDbStore, textMessage } from "../../lib/history/index.js";
import {
  type ExtractionMetricName,
  KnowledgeReader,
  queueUrlOf,
  segmentConsumer,
} from "../../lib/knowledge/index.js";
import type { InlineMessage } from "../../lib/pipeline/contract/index.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import {
  chatCompletion,
  chatError,
  closedAfterEach,
  startChatCompletionsServer,
} from "../support/llm-servers.js";
import { sqsEvent } from "../support/sqs.js";
import {
  answerTopics,
  createResultsTestTable,
  extractorOf,
  openAI,
  promptOf,
  segmentOf,
  TEN_TEXTS,
  WINDOWS_OF_TEN,
} from "./fixtures.js";

const client = testDynamoDbClient();
const startServer = closedAfterEach(startChatCompletionsServer);
let resultsTable: string;
let messagesTable: string;

beforeAll(async () => {
  resultsTable = await createResultsTestTable(client);
  messagesTable = `messages-${Date.now()}`;
  await createMessagesTable(client, messagesTable);
});

/** A v1 segment body, inline or (with `table`) by reference. */
function body(segmentId: string, channel: string, texts: string[], table?: string): string {
  const { segment, messages } = segmentOf(segmentId, texts, channel);
  return JSON.stringify({
    v: 1,
    ...segment,
    messageIds: messages.map((m) => m.id),
    ...(table === undefined ? { messages } : { reference: { table } }),
  });
}

function consumerOf(url: string) {
  const metrics = new Map<ExtractionMetricName, number>();
  const logs: { message: string; attributes: Record<string, unknown> }[] = [];
  const log = (message: string, attributes: Record<string, unknown>) =>
    logs.push({ message, attributes });
  const handler = segmentConsumer({
    extractor: extractorOf({ client, tableName: resultsTable, llm: openAI(url) }),
    messages: new DynamoDbStore({ client, tableName: messagesTable }),
    messagesTable,
    metrics: { add: (name, value) => metrics.set(name, (metrics.get(name) ?? 0) + value) },
    logger: { info: log, warn: log, error: log },
  });
  return { handler, metrics, logs };
}

describe("segmentConsumer", () => {
  it("reports a throttled segment as a batch item failure and stores the others", async () => {
    const server = await startServer((request) =>
      promptOf(request).includes("#throttled")
        ? chatError(429, { "retry-after": "0" })
        : answerTopics(request),
    );
    const { handler, metrics, logs } = consumerOf(server.url);

    const response = await handler(
      sqsEvent([
        body("ok", "batch", TEN_TEXTS),
        body("throttled", "batch", ["the #throttled one"]),
        body("invalid", "batch", ["#fine"]).replace('"v":1', '"v":2'),
      ]),
    );

    expect(response.batchItemFailures).toEqual([
      { itemIdentifier: "record-1" },
      { itemIdentifier: "record-2" },
    ]);
    const reader = new KnowledgeReader({ client, tableName: resultsTable });
    expect((await reader.result("batch", "ok"))?.candidates).toHaveLength(3);
    expect(await reader.result("batch", "throttled")).toBeUndefined();
    expect(metrics.get("SegmentsExtracted")).toBe(1);
    expect(metrics.get("ExtractionFailures")).toBe(2);
    expect(metrics.get("LLMCalls")).toBe(WINDOWS_OF_TEN);
    expect(metrics.get("CandidatesPerSegment")).toBe(3);
    // Logs carry ids and counts, never the chat.
    const logged = JSON.stringify(logs);
    expect(logged).toContain("throttled");
    for (const text of TEN_TEXTS) expect(logged).not.toContain(text);
  });

  it("counts invalid model output and fails the record", async () => {
    const server = await startServer(() => chatCompletion("{not json"));
    const { handler, metrics } = consumerOf(server.url);

    const response = await handler(sqsEvent([body("garbage", "invalid-output", ["#x happened"])]));

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: "record-0" }]);
    expect(metrics.get("InvalidModelOutputs")).toBe(1);
    expect(server.requests).toHaveLength(2);
    // The calls of a failed attempt are counted too: the alarm's rate divides by them.
    expect(metrics.get("LLMCalls")).toBe(2);
    expect(metrics.get("RepairRetries")).toBe(1);
    const reader = new KnowledgeReader({ client, tableName: resultsTable });
    expect(await reader.result("invalid-output", "garbage")).toBeUndefined();
  });

  it("reads a reference-form segment from the messages table, and no other table", async () => {
    const server = await startServer(answerTopics);
    const { segment, messages } = segmentOf("by-reference", TEN_TEXTS, "reference");
    await new DynamoDbStore({ client, tableName: messagesTable }).write(
      "reference",
      messages.map((m: InlineMessage) =>
        textMessage("user", m.text, { id: m.id, ts: m.ts, author: m.author }),
      ),
    );
    const { handler } = consumerOf(server.url);

    const response = await handler(
      sqsEvent([
        body(segment.segmentId, "reference", TEN_TEXTS, messagesTable),
        body("elsewhere", "reference", TEN_TEXTS, "someone-elses-table"),
      ]),
    );

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: "record-1" }]);
    const stored = await new KnowledgeReader({ client, tableName: resultsTable }).result(
      "reference",
      "by-reference",
    );
    expect(stored?.candidates.map((c) => c.messageIds).sort()).toEqual([
      ["by-reference-m0", "by-reference-m2"],
      ["by-reference-m4", "by-reference-m7"],
      ["by-reference-m8", "by-reference-m9"],
    ]);
  });
});

describe("the queue of a record", () => {
  it("finds the queue of an event source ARN", () => {
    expect(queueUrlOf("arn:aws:sqs:eu-west-1:123456789012:segments.fifo")).toBe(
      "https://sqs.eu-west-1.amazonaws.com/123456789012/segments.fifo",
    );
    expect(queueUrlOf("arn:aws-cn:sqs:cn-north-1:123456789012:q")).toBe(
      "https://sqs.cn-north-1.amazonaws.com.cn/123456789012/q",
    );
  });
});
