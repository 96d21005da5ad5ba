import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { getSecret } from "@aws-lambda-powertools/parameters/secrets";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import type { Context } from "aws-lambda";
import {
  DiscordRest,
  DynamoDbCursorStore,
  type PollSummary,
  pollDiscord,
  queueSink,
  readDiscordConfig,
  systemClock,
} from "convoseg/connectors/discord";
import { DynamoDbStore } from "convoseg/history/dynamodb";

/** Read at cold start: a bad setting fails the first invocation, naming the variable. */
const config = readDiscordConfig(process.env);
const metrics = new Metrics({ namespace: "convoseg", serviceName: "discord" });
const logger = new Logger({ serviceName: "convoseg-discord" });
const dynamodb = new DynamoDBClient({});
const cursors = new DynamoDbCursorStore(dynamodb, config.cursorsTable);
const sink = queueSink(new SQSClient({}), config.ingestQueueUrl);
// Read only: the re-read window compares Discord's messages with what is stored.
const history = new DynamoDbStore({ client: dynamodb, tableName: config.messagesTable });
const store = {
  getMessages: (channel: string, ids: readonly string[]) => history.getMessages(channel, ids),
};

/**
 * The scheduled poll (EventBridge): every configured channel and its threads, until the
 * invocation's timeout less the margin; the next run resumes at the cursors. The token is read
 * each cold start and after a 401 (a pasted new secret takes effect at the next run). Logs and
 * metrics hold counts and ids, never message text.
 */
let token: string | undefined;

/** @public The Lambda runtime calls it: infra names this file as the function's entry. */
export async function handler(_event: unknown, context: Context): Promise<PollSummary> {
  try {
    token ??= await readToken();
    const rest = new DiscordRest({
      token,
      baseUrl: config.apiUrl,
      deadline: Date.now() + context.getRemainingTimeInMillis() - config.marginMs,
    });
    const summary = await pollDiscord(
      { rest, cursors, sink, store, clock: systemClock },
      {
        channels: config.channels,
        rereadWindow: config.rereadWindow,
        backfillFrom: config.backfillFrom,
        threads: config.threads,
      },
    );
    if (summary.unauthorized) token = undefined;
    const count = (name: string, value: number) => metrics.addMetric(name, MetricUnit.Count, value);
    count("DiscordChannelsPolled", summary.channelsPolled);
    count("DiscordThreadsPolled", summary.threadsPolled);
    count("DiscordMessagesIngested", summary.ingested);
    count("DiscordEditsSent", summary.edits);
    count("DiscordDeletionsSent", summary.deletions);
    count("DiscordRequests", summary.requests);
    count("DiscordRateLimited", summary.rateLimited);
    count("DiscordAuthFailures", summary.authFailures);
    count("DiscordSourcesStopped", summary.stopped.length);
    count("DiscordEmptyContent", summary.empty);
    count("DiscordDeadlineReached", summary.deadlineReached ? 1 : 0);
    const { stopped, ...counts } = summary;
    logger.info("polled", { ...counts, stopped });
    return summary;
  } finally {
    metrics.publishStoredMetrics();
  }
}

async function readToken(): Promise<string> {
  const value = await getSecret(config.tokenSecret, { forceFetch: true });
  if (typeof value !== "string" || value.trim() === "") {
    throw new Error(`discord: secret ${config.tokenSecret} must hold the bot token as a string`);
  }
  return value.trim();
}
