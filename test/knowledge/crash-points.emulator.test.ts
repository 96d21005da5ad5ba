/**
 * Exactly once under crashes: the extraction process dies right after each of its AWS calls or
 * model calls in turn (every later call of that process fails, its lease is never given back),
 * and the redelivery that follows once the lease has lapsed must store exactly one result, count
 * every topic once, and pay only for the windows whose replies were not stored before the crash.
 */
import { QueryCommand } from "@aws-sdk/client-dynamodb";
import type { LLM } from "convoseg/extraction";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { beforeAll, describe, expect, it } from "vitest";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { closedAfterEach, startChatCompletionsServer } from "../support/llm-servers.js";
import {
  answerTopics,
  createResultsTestTable,
  extractorOf,
  openAI,
  segmentOf,
  TEN_TEXTS,
  WINDOWS_OF_TEN,
} from "./fixtures.js";

const startServer = closedAfterEach(startChatCompletionsServer);
let tableName: string;
const START = Date.UTC(2026, 5, 1);

beforeAll(async () => {
  tableName = await createResultsTestTable(testDynamoDbClient());
});

class Crash extends Error {
  override readonly name: string = "Crash";
}

/** A process that dies after its `awsCall`-th AWS call or `llmCall`-th model answer. */
function dyingProcess(url: string, crashAt: { awsCall?: number; llmCall?: number }) {
  let dead = false;
  let awsCalls = 0;
  let llmCalls = 0;
  const client = testDynamoDbClient();
  client.middlewareStack.add(
    (next) => async (args) => {
      if (dead) throw new Crash("the process is gone");
      const result = await next(args);
      if (++awsCalls === crashAt.awsCall) {
        dead = true;
        throw new Crash(`crashed after AWS call ${awsCalls}`);
      }
      return result;
    },
    { step: "initialize", name: "crashAfter" },
  );
  const model = openAI(url);
  const llm: LLM = {
    chatJSON: async (messages, options) => {
      if (dead) throw new Crash("the process is gone");
      const reply = await model.chatJSON(messages, options);
      if (++llmCalls === crashAt.llmCall) {
        dead = true;
        throw new Crash(`crashed after model call ${llmCalls}`);
      }
      return reply;
    },
  };
  return { client, llm, awsCalls: () => awsCalls };
}

async function storedWindows(channel: string): Promise<number> {
  const { Count } = await testDynamoDbClient().send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: "channel = :c AND begins_with(#item, :w)",
      ExpressionAttributeNames: { "#item": "item" },
      ExpressionAttributeValues: { ":c": { S: channel }, ":w": { S: "window#" } },
      Select: "COUNT",
    }),
  );
  return Count ?? 0;
}

describe("extraction under crashes", () => {
  it("stores one result and re-pays only unfinished windows, whichever call the crash follows", async () => {
    const server = await startServer(answerTopics);
    const clean = dyingProcess(server.url, {});
    const probe = segmentOf("probe", TEN_TEXTS, "crash-probe");
    await extractorOf({
      client: clean.client,
      tableName,
      llm: clean.llm,
      now: () => START,
    }).extract(probe.segment, probe.messages);
    const awsCalls = clean.awsCalls();
    expect(awsCalls).toBeGreaterThan(WINDOWS_OF_TEN);

    const crashPoints: { awsCall?: number; llmCall?: number }[] = [
      ...Array.from({ length: awsCalls }, (_, i) => ({ awsCall: i + 1 })),
      ...Array.from({ length: WINDOWS_OF_TEN }, (_, i) => ({ llmCall: i + 1 })),
    ];
    for (const crashAt of crashPoints) {
      const channel = `crash-${crashAt.awsCall ?? "x"}-${crashAt.llmCall ?? "x"}`;
      const { segment, messages } = segmentOf("segment", TEN_TEXTS, channel);
      const dying = dyingProcess(server.url, crashAt);
      const crashed = extractorOf({
        client: dying.client,
        tableName,
        llm: dying.llm,
        now: () => START,
      });
      const failure = await crashed.extract(segment, messages).catch((error) => error);
      const resultBefore = await new KnowledgeReader({
        client: testDynamoDbClient(),
        tableName,
      }).result(channel, "segment");
      if (resultBefore === undefined)
        expect(failure, JSON.stringify(crashAt)).toBeInstanceOf(Crash);
      const windowsBefore = await storedWindows(channel);
      const requestsBefore = server.requests.length;

      // The redelivery comes after the queue's visibility timeout, long past the lease.
      const retry = await extractorOf({
        client: testDynamoDbClient(),
        tableName,
        llm: openAI(server.url),
        now: () => START + 10 * 60_000,
      }).extract(segment, messages);

      const paid = server.requests.length - requestsBefore;
      const reader = new KnowledgeReader({ client: testDynamoDbClient(), tableName });
      const what = `${JSON.stringify(crashAt)}: ${retry.status}`;
      if (resultBefore !== undefined) {
        expect(retry.status, what).toBe("already-extracted");
        expect(paid, what).toBe(0);
      } else {
        expect(retry.status, what).toBe("extracted");
        expect(paid, what).toBe(WINDOWS_OF_TEN - windowsBefore);
        expect(retry.result.usage.calls, what).toBeGreaterThanOrEqual(WINDOWS_OF_TEN);
      }
      expect(await reader.results(channel), what).toHaveLength(1);
      const topics = await reader.topics(channel);
      expect(topics.map((t) => [t.normalizedTopic, t.segments]).sort(), what).toEqual([
        ["grub", 1],
        ["kernel", 1],
        ["wifi", 1],
      ]);
    }
  });
});
