/**
 * The answer function with a model (ASK_MODEL_ID): a Telegram `/ask` job, as the receiver hands
 * it on, searched in the IRC sample's index, summarized by a scripted Bedrock Converse on
 * 127.0.0.1, its tokens counted in a results table on DynamoDB Local, and posted to a scripted
 * Telegram with the summary above the numbered hits; then, the day's budget spent, the hits
 * alone with no model call.
 */
import { DynamoDbLedger } from "convoseg/knowledge/store";
import { utcDay } from "convoseg/knowledge/write";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createResultsTestTable } from "../knowledge/fixtures.js";
import {
  loadHandlers,
  PLATFORMS,
  recordingServer,
  sampleIndex,
  startSecretsServer,
} from "../support/ask-world.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { closedAfterEach, converseToolUse, startConverseServer } from "../support/llm-servers.js";

const serveConverse = closedAfterEach(startConverseServer);
const BOT_TOKEN_ARN = "arn:aws:secretsmanager:us-east-1:000000000000:secret:tg-bot-AbCdEf";
const BOT_TOKEN = "123456:bot-token";
const telegram = PLATFORMS.telegram;

let indexDir = "";
let secrets: Awaited<ReturnType<typeof startSecretsServer>>;
let platform: Awaited<ReturnType<typeof recordingServer>>;

beforeAll(async () => {
  indexDir = await sampleIndex();
  secrets = await startSecretsServer({ [BOT_TOKEN_ARN]: BOT_TOKEN });
  platform = await recordingServer();
}, 120_000);
afterAll(async () => {
  await Promise.all([secrets?.close(), platform?.close()]);
});

describe("the answer function with a model", () => {
  it("posts a summary citing the hits, charged to the budget, and the hits alone once it is spent", async () => {
    const model = await serveConverse(() =>
      converseToolUse(
        "reply",
        {
          sentences: [
            { text: "Ubuntu keeps them in /var/cache/apt/archives.", hits: [1] },
            { text: "Or somewhere a hit never said.", hits: [7] },
          ],
        },
        { inputTokens: 900, outputTokens: 200 },
      ),
    );
    const client = testDynamoDbClient();
    const resultsTable = await createResultsTestTable(client);
    const [answer] = await loadHandlers<[(job: unknown) => Promise<void>]>(
      ["functions/ask/handler.js"],
      {
        AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
        AWS_ENDPOINT_URL_DYNAMODB: inject("dynamodbEndpoint"),
        AWS_ENDPOINT_URL_BEDROCK_RUNTIME: model.url,
        SEARCH_INDEX_URI: indexDir,
        TELEGRAM_API_BASE: `${platform.url}/telegram`,
        TELEGRAM_BOT_TOKEN_ARN: BOT_TOKEN_ARN,
        ASK_MODEL_ID: "amazon.nova-micro-v1:0",
        RESULTS_TABLE: resultsTable,
        DAILY_TOKEN_BUDGET: "1000",
      },
    );
    const job = {
      platform: "telegram",
      channel: telegram.channel,
      words: "where are the files from the repositories saved",
      replyTo: 7,
    };
    const ask = async () => {
      const from = platform.requests.length;
      await answer(job);
      const posts = platform.requests.slice(from);
      expect(posts.map((p) => p.path)).toEqual([`/telegram/bot${BOT_TOKEN}/sendMessage`]);
      return (JSON.parse(posts[0].body) as { text: string }).text.split("\n");
    };

    const lines = await ask();
    expect(model.requests).toHaveLength(1);
    expect(lines.slice(0, 3)).toEqual([
      "Summary from past answers (written by a model from the hits below):",
      "Ubuntu keeps them in /var/cache/apt/archives. [1]",
      "",
    ]);
    expect(lines[4]).toMatch(/^• \[1\] Q: Where does Ubuntu save the files downloaded/);
    expect(lines[4]).toContain(`https://t.me/c/1234567890/1007`);
    const spent = await new DynamoDbLedger({ client, tableName: resultsTable }).spent(
      telegram.channel,
      utcDay(Date.now()),
    );
    expect(spent).toBe(1100);

    const alone = await ask();
    expect(model.requests).toHaveLength(1);
    expect(alone.join("\n")).not.toContain("Summary");
    expect(alone[1]).toMatch(/^• Q: Where does Ubuntu save the files downloaded/);
  }, 120_000);
});
