/**
 * The answer function: invoked asynchronously by an ask endpoint with the question it verified,
 * it searches the channel's table of the deployed index (SEARCH_INDEX_URI) and posts the answer
 * where the platform said to. Posting is not retried (Lambda's retries are off for it): a second
 * answer would be worse than none. Logs carry the platform, the channel and counts, never words.
 * With ASK_MODEL_ID (a Bedrock model), a short summary of the hits is written above them, its
 * tokens charged to extraction's daily budget in the results table and refused once it is spent.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  type AnswerWriter,
  type AskJob,
  answerAsk,
  answerWriter,
  SUMMARY_MAX_TOKENS,
} from "convoseg/ask";
import { BedrockConverseLLM } from "convoseg/extraction/llm";
import { readTokenBudgets } from "convoseg/knowledge/config";
import { DynamoDbLedger } from "convoseg/knowledge/store";
import { CircuitBreaker, guardedLLM, TokenBudget } from "convoseg/knowledge/write";
import { deployedSearchIndex, searchEnvironment } from "convoseg/search/lancedb";
import { requiredEnvironment, secretString } from "../webhook-receiver.js";

// As the read API reads it: documents past SEARCH_RETENTION_DAYS are never an answer.
const index = deployedSearchIndex({
  ...searchEnvironment(process.env),
  uri: requiredEnvironment("ask", "SEARCH_INDEX_URI"),
});
const log = new Logger({ serviceName: "convoseg-ask" });
const telegramToken = process.env.TELEGRAM_BOT_TOKEN_ARN || undefined;
/** With it, Slack app mentions are answered in their thread (chat.postMessage). */
const slackToken = process.env.SLACK_BOT_TOKEN_ARN || undefined;
const hits = Number(process.env.ASK_HITS) || undefined;

/**
 * The summary's writer when ASK_MODEL_ID names a model: Bedrock Converse, bounded in output
 * tokens, behind extraction's daily budget (DAILY_TOKEN_BUDGET, CHANNEL_TOKEN_BUDGET, counted in
 * RESULTS_TABLE) and a circuit breaker of this execution environment.
 */
function summaryWriter(): AnswerWriter | undefined {
  const modelId = process.env.ASK_MODEL_ID || undefined;
  if (modelId === undefined) return undefined;
  const model = new BedrockConverseLLM({
    modelId,
    output: "tool",
    maxTokens: SUMMARY_MAX_TOKENS,
    maxAttempts: 2,
    // Inside the writer's 10 s: a model that keeps timing out then opens the breaker, which the
    // writer's own abort would not.
    deadlineMs: 9_000,
  });
  requiredEnvironment("ask", "DAILY_TOKEN_BUDGET");
  // Read as extraction reads them, so that both spend one channel's share of the day alike.
  const { daily, perChannel } = readTokenBudgets(process.env);
  const budget = new TokenBudget({
    counter: new DynamoDbLedger({
      client: new DynamoDBClient({}),
      tableName: requiredEnvironment("ask", "RESULTS_TABLE"),
    }),
    daily,
    perChannel,
  });
  const breaker = new CircuitBreaker();
  const onCountError = (error: unknown) =>
    log.warn("could not count a summary's tokens against the budget", {
      error: (error as Error).name,
    });
  return answerWriter({
    llm: (channel) => guardedLLM(model, { budget, breaker, channel, onCountError }),
  });
}

const writer = summaryWriter();

/** @public The Lambda runtime calls it: infra names this file as the function's entry. */
export async function handler(job: AskJob): Promise<void> {
  const where = { platform: job.platform, channel: job.channel };
  try {
    const outcome = await answerAsk(job, {
      search: (query) => {
        if (index === undefined) throw new Error("no search index");
        return index.search(query);
      },
      ...(hits !== undefined && { hits }),
      ...(writer !== undefined && { writer }),
      ...(process.env.SLACK_RESPONSE_PREFIX && {
        slackResponsePrefixes: [process.env.SLACK_RESPONSE_PREFIX],
      }),
      ...(process.env.SLACK_API_BASE && { slackApiBase: process.env.SLACK_API_BASE }),
      ...(slackToken !== undefined && { slackToken: () => secretString(slackToken) }),
      ...(process.env.DISCORD_API_BASE && { discordApiBase: process.env.DISCORD_API_BASE }),
      ...(process.env.TELEGRAM_API_BASE && { telegramApiBase: process.env.TELEGRAM_API_BASE }),
      ...(telegramToken !== undefined && { telegramToken: () => secretString(telegramToken) }),
    });
    log.info("question answered", { ...where, ...outcome });
  } catch (error) {
    const { name, code } = error as { name: string; code?: string };
    log.error("question not answered", { ...where, error: name, code });
  }
}
