/**
 * The mark function: invoked asynchronously by the Slack or Discord ask endpoint with a message a
 * person marked as an answer ("Mark as answer"), it records the correction of the question the
 * message answers in the results table and tells the person, only them, what became of it. Its
 * role may read the question index and the result, put correction items and read message facts:
 * nothing else. ASK_MARKERS: `anyone`, or the platform user ids who may mark, comma-separated.
 * Logs carry the platform, the channel and the outcome, never a message id, a name or a token.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type MarkJob, markAnswer } from "convoseg/ask";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { requiredEnvironment } from "../webhook-receiver.js";

const log = new Logger({ serviceName: "convoseg-ask-mark" });
const client = new DynamoDBClient({});
const messages = new DynamoDbStore({
  client,
  tableName: requiredEnvironment("ask mark", "MESSAGES_TABLE"),
});
const store = new DynamoDbResultStore({
  client,
  tableName: requiredEnvironment("ask mark", "RESULTS_TABLE"),
});
const listed = requiredEnvironment("ask mark", "ASK_MARKERS").trim();
const markers =
  listed === "anyone"
    ? ("anyone" as const)
    : listed
        .split(",")
        .map((id) => id.trim())
        .filter((id) => id !== "");

/** @public The Lambda runtime calls it: infra names this file as the function's entry. */
export async function handler(job: MarkJob): Promise<void> {
  const where = { platform: job.platform, channel: job.channel };
  try {
    const outcome = await markAnswer(job, {
      store,
      // Whether the message is stored, when it was sent, its thread: its facts, never its text.
      messages: { getMessages: (channel, ids) => messages.messageFacts(channel, ids) },
      markers,
      ...(process.env.SLACK_RESPONSE_PREFIX && {
        slackResponsePrefixes: [process.env.SLACK_RESPONSE_PREFIX],
      }),
      ...(process.env.DISCORD_API_BASE && { discordApiBase: process.env.DISCORD_API_BASE }),
    });
    log.info("mark done", { ...where, outcome });
  } catch (error) {
    const { name, code } = error as { name: string; code?: string };
    log.error("mark not done", { ...where, error: name, code });
  }
}
