/**
 * The answer function: invoked asynchronously by an ask endpoint with the question it verified,
 * it searches the channel's table of the deployed index (SEARCH_INDEX_URI) and posts the answer
 * where the platform said to. Posting is not retried (Lambda's retries are off for it): a second
 * answer would be worse than none. Logs carry the platform, the channel and counts, never words.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { type AskJob, answerAsk } from "convoseg/ask";
import { deployedSearchIndex } from "convoseg/search/lancedb";
import { requiredEnvironment, secretString } from "../webhook-receiver.js";

const index = deployedSearchIndex({ uri: requiredEnvironment("ask", "SEARCH_INDEX_URI") });
const log = new Logger({ serviceName: "convoseg-ask" });
const telegramToken = process.env.TELEGRAM_BOT_TOKEN_ARN || undefined;
/** With it, Slack app mentions are answered in their thread (chat.postMessage). */
const slackToken = process.env.SLACK_BOT_TOKEN_ARN || undefined;
const hits = Number(process.env.ASK_HITS) || undefined;

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
