import type { Context } from "aws-lambda";
import { describe, expect, it, vi } from "vitest";
import { KnowledgeReader } from "../../lib/knowledge/index.js";
import { createResultsTestTable, segmentOf, TEN_TEXTS } from "../knowledge/fixtures.js";
import { stubLocalAws } from "../support/aws-env.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import {
  closedAfterEach,
  converseError,
  converseToolUse,
  startConverseServer,
} from "../support/llm-servers.js";
import { sqsEvent } from "../support/sqs.js";

const startServer = closedAfterEach(startConverseServer);

/** The deployed handler module, loaded the way Lambda loads it: configured by environment. */
async function loadHandler(environment: Record<string, string | undefined>) {
  vi.resetModules();
  stubLocalAws();
  for (const [name, value] of Object.entries(environment)) vi.stubEnv(name, value);
  return (await import("../../functions/extract/handler.js")).handler;
}

const context = {} as Context;

const body = (segmentId: string, texts: string[]) => {
  const { segment, messages } = segmentOf(segmentId, texts, "lambda");
  return JSON.stringify({ v: 1, ...segment, messageIds: messages.map((m) => m.id), messages });
};

describe("extract Lambda", () => {
  it("fails at cold start, naming every bad setting", async () => {
    await expect(
      loadHandler({
        RESULTS_TABLE: "r",
        EXTRACTOR: "gpt",
        WINDOW_SIZE: "0",
        MESSAGES_TABLE: undefined,
      }),
    ).rejects.toThrow(
      /^extract: EXTRACTOR must be one of bedrock, openai, offline \(got "gpt"\); MESSAGES_TABLE must be set \(environment variable\); .*WINDOW_SIZE must be an integer from 1 to 1000 \(got "0"\)/,
    );
  });

  it("extracts segments with Bedrock and reports a throttled one as a batch item failure", async () => {
    const server = await startServer((request) => {
      const prompt = JSON.stringify(request.body);
      if (prompt.includes("#throttled")) return converseError(429, "ThrottlingException");
      return converseToolUse("reply", {
        candidates: [
          {
            topic: "grub",
            reason: "r",
            confidence: 0.9,
            tags: [],
            turn_range: [1, 3],
            subjective: false,
            wiki_worthy: null,
          },
        ],
      });
    });
    const client = testDynamoDbClient();
    const resultsTable = await createResultsTestTable(client);
    vi.stubEnv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.url);
    const handler = await loadHandler({
      RESULTS_TABLE: resultsTable,
      MESSAGES_TABLE: "messages",
      EXTRACTOR: "bedrock",
      MODEL_ID: "amazon.nova-lite-v1:0",
      POWERTOOLS_METRICS_DISABLED: "true",
    });

    const response = await handler(
      sqsEvent([body("fine", TEN_TEXTS), body("slow", ["the #throttled one"])]),
      context,
    );

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: "record-1" }]);
    const stored = await new KnowledgeReader({ client, tableName: resultsTable }).result(
      "lambda",
      "fine",
    );
    expect(stored).toMatchObject({
      model: "amazon.nova-lite-v1:0",
      promptVersion: "2/sliding-60-6",
    });
    expect(stored?.candidates[0].messageIds).toEqual(["fine-m0", "fine-m2"]);
  }, 60_000);
});
