/**
 * The Telegram webhook receiver behind a Lambda Function URL: checks the secret token set with
 * setWebhook, and sends each message or channel post (or its edit) as one ingest line to the
 * ingest queue (one SendMessage). A repeated `update_id` is acknowledged and not sent again
 * (claims in a DynamoDB table: the ingest queue is standard). Logs carry ids, never text.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { getSecret } from "@aws-lambda-powertools/parameters/secrets";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from "aws-lambda";
import { DynamoDbEventClaims, telegramReceiver } from "../../lib/connectors/index.js";

/** Read once at cold start: a missing setting fails the first invocation with its name. */
function requiredEnvironment(name: string): string {
  const value = process.env[name];
  if (value === undefined || value.trim() === "") {
    throw new Error(
      `telegram: environment variable ${name} must be set (got ${JSON.stringify(value)})`,
    );
  }
  return value;
}

const queueUrl = requiredEnvironment("INGEST_QUEUE_URL");
const secretId = requiredEnvironment("TELEGRAM_SECRET_TOKEN_ARN");
const claimsTable = requiredEnvironment("CLAIMS_TABLE");
/** As the Slack receiver: a rotated token is read within five minutes. */
const SECRET_MAX_AGE_SECONDS = 300;

const metrics = new Metrics({ namespace: "convoseg", serviceName: "telegram" });
const logger = new Logger({ serviceName: "convoseg-telegram" });
const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });

const receive = telegramReceiver({
  secretToken: async () => {
    const value = await getSecret(secretId, { maxAge: SECRET_MAX_AGE_SECONDS });
    if (typeof value !== "string" || value === "") {
      throw new TypeError(`the secret ${secretId} is empty or not a string`);
    }
    return value;
  },
  claims: new DynamoDbEventClaims({
    client: new DynamoDBClient({}),
    tableName: claimsTable,
    platform: "telegram",
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
    const body = Buffer.from(event.body ?? "", event.isBase64Encoded ? "base64" : "utf8");
    return await receive({ headers: event.headers ?? {}, body });
  } finally {
    if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  }
}
