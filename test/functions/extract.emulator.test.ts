import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Context } from "aws-lambda";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { describe, expect, it, vi } from "vitest";
import {
  createMessagesTestTable,
  createResultsTestTable,
  segmentOf,
  TEN_TEXTS,
} from "../knowledge/fixtures.js";
import { stubLocalAws } from "../support/aws-env.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import {
  chatCompletion,
  closedAfterEach,
  converseError,
  converseToolUse,
  startChatCompletionsServer,
  startConverseServer,
} from "../support/llm-servers.js";
import { sqsEvent } from "../support/sqs.js";

const startServer = closedAfterEach(startConverseServer);
const startChatServer = closedAfterEach(startChatCompletionsServer);

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
      /^extract: EXTRACTOR must be one of bedrock, openai, offline \(got "gpt"\); MESSAGES_TABLE must be set \(environment variable\), not blank; .*WINDOW_SIZE must be an integer from 1 to 1000 \(got "0"\)/,
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
      MESSAGES_TABLE: await createMessagesTestTable(client),
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
      promptVersion: "3/sliding-60-6",
    });
    expect(stored?.candidates[0].messageIds).toEqual(["fine-m0", "fine-m2"]);
  }, 60_000);

  it.each(["bedrock", "openai"])(
    "ends a %s call that gets no answer at LLM_DEADLINE, failing the record",
    async (extractor) => {
      const silent = { body: {}, delayMs: 60_000 };
      const model =
        extractor === "bedrock" ? await startServer([silent]) : await startChatServer([silent]);
      // The OpenAI key's parameter, answered at once. SSM, not Secrets Manager: Powertools keeps
      // one client per service and process (vi.resetModules leaves node_modules alone), made
      // with the endpoint its first reader gave, and the key test below reads Secrets Manager.
      const ssm = createServer((req, res) => {
        req.resume();
        req.on("end", () => {
          res.writeHead(200, { "content-type": "application/x-amz-json-1.1" });
          res.end(
            JSON.stringify({ Parameter: { Name: "/key", Type: "SecureString", Value: "k" } }),
          );
        });
      });
      await new Promise<void>((resolve) => ssm.listen(0, "127.0.0.1", resolve));
      try {
        const client = testDynamoDbClient();
        const resultsTable = await createResultsTestTable(client);
        vi.stubEnv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", model.url);
        vi.stubEnv(
          "AWS_ENDPOINT_URL_SSM",
          `http://127.0.0.1:${(ssm.address() as AddressInfo).port}`,
        );
        const handler = await loadHandler({
          RESULTS_TABLE: resultsTable,
          MESSAGES_TABLE: await createMessagesTestTable(client),
          EXTRACTOR: extractor,
          MODEL_ID: extractor === "bedrock" ? "amazon.nova-lite-v1:0" : "m",
          ...(extractor === "openai" && {
            OPENAI_BASE_URL: `${model.url}/v1`,
            OPENAI_API_KEY_PARAMETER: "/key",
          }),
          // Without it the adapters wait 120 s for each request, past this test's timeout.
          LLM_DEADLINE: "1s",
          POWERTOOLS_METRICS_DISABLED: "true",
        });

        const response = await handler(sqsEvent([body("stalled", ["#grub"])]), context);

        expect(response.batchItemFailures).toEqual([{ itemIdentifier: "record-0" }]);
        expect(model.requests.length).toBeGreaterThan(0);
      } finally {
        await new Promise((resolve) => ssm.close(resolve));
      }
    },
    30_000,
  );

  it("reads the API key when a call needs it: a failed read is retried by the next invocation", async () => {
    // Secrets Manager's JSON protocol: the first read is refused, the next ones answered.
    let reads = 0;
    const secrets = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        reads++;
        res.writeHead(reads === 1 ? 400 : 200, { "content-type": "application/x-amz-json-1.1" });
        res.end(
          JSON.stringify(
            reads === 1
              ? { __type: "AccessDeniedException", message: "not yet" }
              : { Name: "key", SecretString: "sk-live" },
          ),
        );
      });
    });
    await new Promise<void>((resolve) => secrets.listen(0, "127.0.0.1", resolve));
    const chat = await startChatServer((request) =>
      request.headers.authorization === "Bearer sk-live"
        ? chatCompletion('{"candidates":[]}')
        : { status: 401, body: { error: { message: "no key" } } },
    );
    try {
      const client = testDynamoDbClient();
      const resultsTable = await createResultsTestTable(client);
      vi.stubEnv(
        "AWS_ENDPOINT_URL_SECRETS_MANAGER",
        `http://127.0.0.1:${(secrets.address() as AddressInfo).port}`,
      );
      const handler = await loadHandler({
        RESULTS_TABLE: resultsTable,
        MESSAGES_TABLE: await createMessagesTestTable(client),
        EXTRACTOR: "openai",
        MODEL_ID: "m",
        OPENAI_BASE_URL: `${chat.url}/v1`,
        OPENAI_API_KEY_SECRET: "arn:aws:secretsmanager:us-east-1:123456789012:secret:key-AbCdEf",
        POWERTOOLS_METRICS_DISABLED: "true",
      });

      const first = await handler(sqsEvent([body("first", ["#grub"])]), context);
      const second = await handler(sqsEvent([body("second", ["#grub"])]), context);

      expect(first.batchItemFailures).toEqual([{ itemIdentifier: "record-0" }]);
      expect(second.batchItemFailures).toEqual([]);
      expect(reads).toBe(2);
      expect(chat.requests).toHaveLength(1);
    } finally {
      await new Promise((resolve) => secrets.close(resolve));
    }
  }, 60_000);
});
