/**
 * Failures as each command says them: a wrong table or queue, an emulator endpoint nobody
 * serves, a model endpoint that refuses; one line (two with the model's own words) naming what
 * is at fault and what to do, never a stack trace.
 */

import { KeyphraseExtractor } from "convoseg/extraction/offline";
import { createMessagesTable } from "convoseg/history/dynamodb";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { promptVersionOf, SegmentExtractor } from "convoseg/knowledge/write";
import { describe, expect, inject, it, vi } from "vitest";
import { tableProblem } from "../../cli/shared/failures.js";
import { createSegmentQueue } from "../../local/sqs.js";
import { CHAT_ANALYSIS, createResultsTestTable, segmentOf } from "../knowledge/fixtures.js";
import { stubLocalAws } from "../support/aws-env.js";
import { runCli } from "../support/cli.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import {
  chatError,
  closedAfterEach,
  closedPort,
  startChatCompletionsServer,
} from "../support/llm-servers.js";
import { testSqsClient, uniqueQueueName } from "../support/sqs.js";

const cli = (args: string[]) => runCli(args, Date.UTC(2026, 0, 2));
const startServer = closedAfterEach(startChatCompletionsServer);

/** One line on stderr, exit 1, no stack trace. */
function expectOneLine(run: { code: number; stderr: string }, line: RegExp): void {
  expect(run.code).toBe(1);
  expect(run.stderr.trimEnd()).toMatch(line);
  expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(run.stderr).not.toMatch(/\n\s+at /);
}

describe("a wrong table or queue", () => {
  it.each([
    [
      ["channel", "show", "ops", "--table", "no-such-channels"],
      /^channel: no table "no-such-channels" \(the channels table\) at http:\/\/\S+: pass the stack's ChannelsTableName with --table \(or set CHANNELS_TABLE\)$/,
    ],
    [
      ["channel", "reset", "ops", "--table", "no-such-channels"],
      /^channel: no table "no-such-channels" \(the channels table\) at /,
    ],
    [
      ["topics", "ops", "--table", "no-such-results"],
      /^topics: no table "no-such-results" \(the results table\) at http:\/\/\S+: pass the stack's ResultsTableName with --table \(or set RESULTS_TABLE\)$/,
    ],
  ])("%j says which table, and what to do", async (args, line) => {
    stubLocalAws();
    expectOneLine(await cli(args), line);
  });

  it("reextract names a messages or results table that does not exist", async () => {
    stubLocalAws();
    const client = testDynamoDbClient();
    const results = await createResultsTestTable(client);
    const messages = `messages-${Date.now()}-failures`;
    await createMessagesTable(client, messages);
    const queue = await createSegmentQueue(testSqsClient(), uniqueQueueName("failures"), {
      fifo: true,
    });
    const args = (table: string, messagesTable: string, url: string) => [
      "reextract",
      "ops",
      "s1",
      "--queue",
      url,
      "--table",
      table,
      "--messages-table",
      messagesTable,
    ];
    expectOneLine(
      await cli(args(results, "no-such-messages", queue)),
      /^reextract: no table "no-such-messages" \(the messages table\) at \S+: pass the stack's MessagesTableName with --messages-table \(or set MESSAGES_TABLE\)$/,
    );
    expectOneLine(
      await cli(args("no-such-results", messages, queue)),
      /^reextract: no table "no-such-results" \(the results table\) at /,
    );
  });

  it("reextract names a queue that does not exist", async () => {
    stubLocalAws();
    const client = testDynamoDbClient();
    const results = await createResultsTestTable(client);
    const messages = `messages-${Date.now()}-queue`;
    await createMessagesTable(client, messages);
    const { segment, messages: texts } = segmentOf("s1", ["the grub bootloader", "grub ok"], "ops");
    await new SegmentExtractor({
      store: new DynamoDbResultStore({ client, tableName: results }),
      extractor: new KeyphraseExtractor(),
      model: "offline",
      promptVersion: promptVersionOf(CHAT_ANALYSIS),
    }).extract(segment, texts);
    const queue = `${inject("sqsEndpoint")}/000000000000/no-such-queue.fifo`;

    expectOneLine(
      await cli([
        "reextract",
        "ops",
        "s1",
        "--queue",
        queue,
        "--table",
        results,
        "--messages-table",
        messages,
      ]),
      new RegExp(
        `^reextract: no queue "${queue.replace(/[.]/g, "\\.")}" at \\S+: pass the stack's SegmentQueueUrl with --queue$`,
      ),
    );
  });

  it("says a missing region or credentials and refused access as such, and blames no table for a bug", () => {
    vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", undefined);
    vi.stubEnv("AWS_REGION", "eu-west-1");
    const ref = { table: "t", role: "the results table", fix: "pass --table" };
    const credentials = Object.assign(new Error("Could not load credentials from any providers"), {
      name: "CredentialsProviderError",
    });
    expect(tableProblem(credentials, ref)).toMatch(
      /^no AWS credentials to use the results table "t": configure the AWS SDK's credential chain/,
    );
    const denied = Object.assign(new Error("User is not authorized"), {
      name: "AccessDeniedException",
      $metadata: { httpStatusCode: 400 },
    });
    expect(tableProblem(denied, ref)).toBe(
      `DynamoDB in eu-west-1 refused access to the results table "t" (AccessDeniedException): check the AWS credentials, and that they may use it`,
    );
    expect(tableProblem(new Error("Region is missing"), ref)).toBe(
      `no AWS region to find the results table "t" in: set AWS_REGION (or AWS_ENDPOINT_URL_DYNAMODB to an emulator)`,
    );
    expect(tableProblem(new TypeError("x is undefined"), ref)).toBe("TypeError: x is undefined");
  });
});

describe("the emulator endpoints and the tables of import", () => {
  it("names a history or results table that does not exist", async () => {
    stubLocalAws();
    const args = ["import", "examples/agent-session.txt", "--conversation", "c"];
    expectOneLine(
      await cli([...args, "--table", "no-such-history"]),
      /^import: no table "no-such-history" \(the history table\) at \S+: pass an existing messages table with --table/,
    );
    const history = `history-${Date.now()}-failures`;
    await createMessagesTable(testDynamoDbClient(), history);
    expectOneLine(
      await cli([...args, "--table", history, "--extract", "--results-table", "no-such-results"]),
      /^import: no table "no-such-results" \(the results table\) at \S+: pass an existing results table with --results-table/,
    );
  });

  it.each(["channel", "topics"])(
    "%s says which endpoint it cannot reach",
    async (command) => {
      stubLocalAws();
      const port = await closedPort();
      vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", `http://127.0.0.1:${port}`);
      const args = command === "channel" ? ["channel", "show", "ops"] : ["topics", "ops"];
      expectOneLine(
        await cli([...args, "--table", "t"]),
        new RegExp(
          `^${command}: cannot reach DynamoDB at http://127\\.0\\.0\\.1:${port} for the (channels|results) table "t" \\(ECONNREFUSED\\): is AWS_ENDPOINT_URL_DYNAMODB right`,
        ),
      );
    },
    30_000,
  );
});

describe("import --extract against a model endpoint that fails", () => {
  it.each([
    ["refuses connections", null, /refused the connection \(ECONNREFUSED\)/],
    ["refuses the key", chatError(401), /refused the credentials \(401 Unauthorized\)/],
  ])(
    "names why when it %s, and says the turns are stored",
    async (_, failure, cause) => {
      stubLocalAws();
      vi.stubEnv("OPENAI_API_KEY", "test-key");
      const server = failure && (await startServer(() => failure));
      const endpoint = server ? `${server.url}/v1` : `http://127.0.0.1:${await closedPort()}/v1`;

      const run = await cli([
        "import",
        "examples/agent-session.txt",
        "--conversation",
        "demo",
        "--extract",
        "--llm-endpoint",
        endpoint,
      ]);

      expect(run.code).toBe(1);
      const lines = run.stderr.trimEnd().split("\n");
      expect(lines[0]).toMatch(/^import: extraction failed: http:\/\/127\.0\.0\.1:\d+\/v1 /);
      expect(lines[0]).toMatch(cause);
      expect(lines.at(-1)).toMatch(
        /^import: the turns are stored in table \S+, but the conversation was not extracted: .*, then run the same command again$/,
      );
      expect(run.stderr).not.toMatch(/\n\s+at /);
      // The analyzer stops at the first failed window: one call (and the SDK's retries).
      if (server) expect(server.requests.length).toBeLessThanOrEqual(4);
    },
    60_000,
  );
});
