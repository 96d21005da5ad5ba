import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import type { SQSRecord } from "aws-lambda";
import { textMessage } from "convoseg/history";
import { createMessagesTable, DynamoDbStore } from "convoseg/history/dynamodb";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { DynamoDbLedger } from "convoseg/knowledge/store";
import {
  type ExtractionMetricName,
  GAVE_UP_ATTRIBUTE,
  queueUrlOf,
  segmentConsumer,
} from "convoseg/knowledge/write";
import type { InlineMessage } from "convoseg/pipeline/contract";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { createSegmentQueue } from "../../local/sqs.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import {
  chatCompletion,
  chatError,
  closedAfterEach,
  startChatCompletionsServer,
} from "../support/llm-servers.js";
import { drainQueue, sqsEvent, uniqueQueueName } from "../support/sqs.js";
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

describe("the retry schedule, scaled down to seconds, on the emulators", () => {
  /** The emulator behind the queue URLs the consumer builds from ARNs, as in AWS. */
  const sqs = new SQSClient({
    endpoint: inject("sqsEndpoint"),
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
    useQueueUrlAsEndpoint: false,
    maxAttempts: 1,
  });

  const recordOf = (message: Message, queueUrl: string): SQSRecord => {
    const [account, name] = new URL(queueUrl).pathname.split("/").filter(Boolean).slice(-2);
    const attributes = message.Attributes ?? {};
    return {
      messageId: message.MessageId ?? "",
      receiptHandle: message.ReceiptHandle ?? "",
      body: message.Body ?? "",
      attributes: {
        ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? "1",
        SentTimestamp: "0",
        SenderId: "tick",
        ApproximateFirstReceiveTimestamp: "0",
      },
      messageAttributes: {},
      md5OfBody: "",
      eventSource: "aws:sqs",
      eventSourceARN: `arn:aws:sqs:us-east-1:${account}:${name}`,
      awsRegion: "us-east-1",
    };
  };

  it("rides out an outage, dead-letters only what never succeeds, by its own attempt count", async () => {
    // The provider is down for the first three calls, and always for the #doomed segment.
    let calls = 0;
    const server = await startServer((request) => {
      calls++;
      if (promptOf(request).includes("#doomed") || calls <= 3) return chatError(503);
      return answerTopics(request);
    });
    const queueUrl = await createSegmentQueue(sqs, uniqueQueueName("outage"), { fifo: false });
    const deadLetterQueueUrl = await createSegmentQueue(sqs, uniqueQueueName("outage-dlq"), {
      fifo: false,
    });
    const ledger = new DynamoDbLedger({ client, tableName: resultsTable });
    const quiet = () => {};
    const handler = segmentConsumer({
      extractor: extractorOf({ client, tableName: resultsTable, llm: openAI(server.url) }),
      messages: new DynamoDbStore({ client, tableName: messagesTable }),
      messagesTable,
      metrics: { add: quiet },
      logger: { info: quiet, warn: quiet, error: quiet },
      sqs,
      attempts: ledger,
      deadLetterQueueUrl,
      retry: { baseDelaySeconds: 1, maxDelaySeconds: 2, maxAttempts: 4 },
    });
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: body("back", "outage", ["#grub"]),
      }),
    );
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: body("doomed", "outage", ["the #doomed one"]),
      }),
    );

    const reader = new KnowledgeReader({ client, tableName: resultsTable });
    const settled = async () => {
      const { Attributes = {} } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: deadLetterQueueUrl,
          AttributeNames: ["ApproximateNumberOfMessages"],
        }),
      );
      return (
        Number(Attributes.ApproximateNumberOfMessages) > 0 &&
        (await reader.result("outage", "back")) !== undefined
      );
    };
    // Lambda's event source: receive, hand over, delete what succeeded; the consumer sets the
    // failed records' visibility to its retry delays and sends given-up ones to the DLQ itself.
    const receives: number[] = [];
    for (let round = 0; round < 60; round++) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          VisibilityTimeout: 60,
          AttributeNames: ["All"],
        }),
      );
      if (Messages.length === 0) {
        if (await settled()) break;
        continue;
      }
      receives.push(...Messages.map((m) => Number(m.Attributes?.ApproximateReceiveCount)));
      const response = await handler({ Records: Messages.map((m) => recordOf(m, queueUrl)) });
      const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      const done = Messages.filter((m) => !failed.has(m.MessageId ?? ""));
      if (done.length > 0) {
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
          }),
        );
      }
    }

    expect((await reader.result("outage", "back"))?.candidates.map((c) => c.topic)).toEqual([
      "grub",
    ]);
    expect(await reader.result("outage", "doomed")).toBeUndefined();
    const dead = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: deadLetterQueueUrl,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ["All"],
      }),
    );
    expect(dead.Messages?.map((m) => JSON.parse(m.Body ?? "").segmentId)).toEqual(["doomed"]);
    expect(dead.Messages?.[0].MessageAttributes?.[GAVE_UP_ATTRIBUTE]?.StringValue).toBe(
      "4 attempts; last LLMError EXTRACTION_LLM_FAILED",
    );
    expect(await drainQueue(sqs, queueUrl)).toEqual([]);
    // The given-up count is the consumer's own, not the receive count (which the emulator also
    // raises on every visibility change).
    expect(Math.max(...receives)).toBeGreaterThanOrEqual(4);
  }, 60_000);
});

describe("the results table's counters", () => {
  it("count attempts and tokens atomically, beside a lease, and a stored result ends the count", async () => {
    const ledger = new DynamoDbLedger({ client, tableName: resultsTable });
    const counts = await Promise.all(
      Array.from({ length: 10 }, () => ledger.countAttempt("counters", "s1")),
    );
    expect(counts.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    await ledger.clearAttempts("counters", "s1");
    expect(await ledger.countAttempt("counters", "s1")).toBe(1);

    await Promise.all(Array.from({ length: 10 }, () => ledger.add(" deployment", "2026-01-01", 7)));
    expect(await ledger.spent(" deployment", "2026-01-01")).toBe(70);
    expect(await ledger.spent(" deployment", "2026-01-02")).toBe(0);

    // A counted segment is still extracted (the count sits on its lease item), and the stored
    // result removes the count with the lease.
    const server = await startServer(answerTopics);
    const extractor = extractorOf({ client, tableName: resultsTable, llm: openAI(server.url) });
    const { segment, messages } = segmentOf("s1", TEN_TEXTS, "counters");
    await extractor.extract(segment, messages);
    expect(await ledger.countAttempt("counters", "s1")).toBe(1);
  });
});
