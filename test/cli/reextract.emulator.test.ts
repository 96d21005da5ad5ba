import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { KeyphraseExtractor } from "convoseg/extraction/offline";
import { textMessage } from "convoseg/history";
import { createMessagesTable, DynamoDbStore } from "convoseg/history/dynamodb";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import {
  promptVersionOf,
  REEXTRACT_ATTRIBUTE,
  SegmentExtractor,
  segmentConsumer,
} from "convoseg/knowledge/write";
import { parseSegmentBody } from "convoseg/pipeline/contract";
import { describe, expect, it, vi } from "vitest";
import { createSegmentQueue } from "../../local/sqs.js";
import { CHAT_ANALYSIS, createResultsTestTable, segmentOf } from "../knowledge/fixtures.js";
import { stubLocalAws } from "../support/aws-env.js";
import { runCli } from "../support/cli.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { sqsEvent, testSqsClient, uniqueQueueName } from "../support/sqs.js";

const cli = (args: string[]) => runCli(args, Date.UTC(2026, 0, 2));

describe("reextract command", () => {
  it("sends a stored segment back by reference, flagged, and the consumer replaces its result", async () => {
    stubLocalAws();
    const client = testDynamoDbClient();
    const sqs = testSqsClient();
    const resultsTable = await createResultsTestTable(client);
    const messagesTable = `messages-${Date.now()}-reextract`;
    await createMessagesTable(client, messagesTable);
    const queueUrl = await createSegmentQueue(sqs, uniqueQueueName("reextract"), { fifo: true });
    const { segment, messages } = segmentOf(
      "again",
      ["the grub bootloader", "grub bootloader ok"],
      "ops",
    );
    await new DynamoDbStore({ client, tableName: messagesTable }).write(
      "ops",
      messages.map((m) => textMessage("user", m.text, { id: m.id, ts: m.ts, author: m.author })),
    );
    const extractor = new SegmentExtractor({
      store: new DynamoDbResultStore({ client, tableName: resultsTable }),
      extractor: new KeyphraseExtractor(),
      model: "offline",
      promptVersion: promptVersionOf(CHAT_ANALYSIS),
    });
    const first = await extractor.extract(segment, messages);
    const tables = ["--table", resultsTable, "--messages-table", messagesTable];

    const run = await cli(["reextract", "ops", "again", "missing", "--queue", queueUrl, ...tables]);

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^segment again: re-extraction requested \(message \S+; its result was offline \/ prompt 3\/sliding-60-6\)/,
    );
    // A line of its own: the line's end is no escaped "\u000a".
    expect(run.stderr).toMatch(/segment missing of "ops": no stored result\n/);
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MessageAttributeNames: ["All"],
        AttributeNames: ["All"],
      }),
    );
    expect(Messages).toHaveLength(1);
    const body = parseSegmentBody(Messages[0].Body ?? "");
    expect(body).toMatchObject({
      segmentId: "again",
      messageIds: messages.map((m) => m.id),
      reference: { table: messagesTable },
    });
    expect(Messages[0].MessageAttributes?.[REEXTRACT_ATTRIBUTE]?.StringValue).toBe("true");

    const quiet = () => {};
    const handler = segmentConsumer({
      extractor,
      messages: new DynamoDbStore({ client, tableName: messagesTable }),
      messagesTable,
      metrics: { add: quiet },
      logger: { info: quiet, warn: quiet, error: quiet },
    });
    // The attribute as Lambda's event source delivers what the command sent.
    const response = await handler(
      sqsEvent([Messages[0].Body ?? ""], {
        messageAttributes: {
          [REEXTRACT_ATTRIBUTE]: {
            stringValue: Messages[0].MessageAttributes?.[REEXTRACT_ATTRIBUTE]?.StringValue,
            dataType: "String",
          },
        },
      }),
    );

    expect(response.batchItemFailures).toEqual([]);
    const replaced = await new KnowledgeReader({ client, tableName: resultsTable }).result(
      "ops",
      "again",
    );
    expect(replaced?.replaced).toEqual({
      model: "offline",
      promptVersion: first.result.promptVersion,
      extractedAt: first.result.extractedAt,
    });
  });

  it("refuses a result stored without its message ids, saying why", async () => {
    stubLocalAws();
    const client = testDynamoDbClient();
    const sqs = testSqsClient();
    const resultsTable = await createResultsTestTable(client);
    const messagesTable = `messages-${Date.now()}-reextract-ids`;
    await createMessagesTable(client, messagesTable);
    const queueUrl = await createSegmentQueue(sqs, uniqueQueueName("reextract-ids"), {
      fifo: true,
    });
    // 450 messages with ids of 1,000 bytes: the result leaves its message ids out to fit.
    const texts = Array.from({ length: 450 }, (_, i) => `grub line ${i}`);
    const { segment, messages } = segmentOf("long", texts, "ops");
    const long = messages.map((m, i) => ({
      ...m,
      id: `${String(i).padStart(4, "0")}${"x".repeat(996)}`,
    }));
    const extractor = new SegmentExtractor({
      store: new DynamoDbResultStore({ client, tableName: resultsTable }),
      extractor: new KeyphraseExtractor(),
      model: "offline",
      promptVersion: promptVersionOf(CHAT_ANALYSIS),
    });
    const stored = await extractor.extract(
      {
        ...segment,
        first: { id: long[0].id, ts: long[0].ts },
        last: { id: long[449].id, ts: long[449].ts },
      },
      long,
    );
    expect(stored.result.trimmed).toEqual({ messageIds: 450 });
    const tables = ["--table", resultsTable, "--messages-table", messagesTable];

    const run = await cli(["reextract", "ops", "long", "--queue", queueUrl, ...tables]);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /segment long of "ops": its result lists no message ids \(left out to fit DynamoDB's item limit\).*instead\n/,
    );
    expect(run.stdout).toBe("");
  });

  it("names what is missing", async () => {
    vi.stubEnv("RESULTS_TABLE", undefined);
    const { code, stderr } = await cli(["reextract", "ops"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/expected a channel and at least one segment id/);
  });
});
