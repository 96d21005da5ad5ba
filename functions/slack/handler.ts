/**
 * The Slack Events API receiver behind a Lambda Function URL: verifies each request with the
 * app's signing secret, answers `url_verification`, and sends each message event's ingest line
 * to the ingest queue (one SendMessage), where the ingestion function takes it as any producer's.
 * A retry of an event already taken is acknowledged and not sent again (claims in a DynamoDB
 * table: the ingest queue is standard, with no deduplication id). Logs carry ids, never text.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { getSecret } from "@aws-lambda-powertools/parameters/secrets";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from "aws-lambda";
import { DynamoDbEventClaims, SlackUserNames, slackReceiver } from "../../lib/connectors/index.js";

/** Read once at cold start: a missing setting fails the first invocation with its name. */
function requiredEnvironment(name: string): string {
  const value = process.env[name];
  if (value === undefined || value.trim() === "") {
    throw new Error(
      `slack: environment variable ${name} must be set (got ${JSON.stringify(value)})`,
    );
  }
  return value;
}

const queueUrl = requiredEnvironment("INGEST_QUEUE_URL");
const secretId = requiredEnvironment("SLACK_SIGNING_SECRET_ARN");
const claimsTable = requiredEnvironment("CLAIMS_TABLE");
/** Optional: with the bot token, authors and mentions are named (users.info), else left as ids. */
const botTokenId = process.env.SLACK_BOT_TOKEN_ARN || undefined;

/**
 * Five minutes: a rotated secret is read within that, and a warm function reads it about once
 * per five minutes instead of per request (the Powertools cache, as the extract function uses).
 */
const SECRET_MAX_AGE_SECONDS = 300;

const metrics = new Metrics({ namespace: "convoseg", serviceName: "slack" });
const logger = new Logger({ serviceName: "convoseg-slack" });
// The client's own endpoint, not the URL's host, as the other functions do: the same host in
// AWS, the emulator's locally.
const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });

/** A secret's string, cached by the Powertools utility. */
async function secretString(id: string): Promise<string> {
  const value = await getSecret(id, { maxAge: SECRET_MAX_AGE_SECONDS });
  if (typeof value !== "string" || value === "") {
    throw new TypeError(`the secret ${id} is empty or not a string`);
  }
  return value;
}

const userNames =
  botTokenId === undefined
    ? undefined
    : new SlackUserNames({ token: () => secretString(botTokenId) });

const receive = slackReceiver({
  signingSecret: () => secretString(secretId),
  ...(userNames && { userNames: (ids: string[]) => userNames.names(ids) }),
  claims: new DynamoDbEventClaims({
    client: new DynamoDBClient({}),
    tableName: claimsTable,
    platform: "slack",
  }),
  send: async (line) => {
    await sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(line) }),
    );
  },
  metrics: { add: (name, value) => metrics.addMetric(name, MetricUnit.Count, value) },
  log: logger,
});

export async function handler(event: LambdaFunctionURLEvent): Promise<LambdaFunctionURLResult> {
  try {
    // The body as Slack signed it: a Function URL hands over binary (and some text) as base64.
    const body = Buffer.from(event.body ?? "", event.isBase64Encoded ? "base64" : "utf8");
    return await receive({ headers: event.headers ?? {}, body });
  } finally {
    if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  }
}
