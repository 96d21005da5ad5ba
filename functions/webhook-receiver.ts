/**
 * What the Slack and Telegram receivers' Lambdas share: their settings read at cold start, the
 * secret read through the Powertools cache, claims in their DynamoDB table, one SendMessage per
 * ingest line, counts as EMF metrics, and the Function URL event as the raw body it was signed as.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { getSecret } from "@aws-lambda-powertools/parameters/secrets";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from "aws-lambda";
import {
  type ChatScope,
  type ConnectorLog,
  type ConnectorMetric,
  DynamoDbEventClaims,
  type EventClaims,
  type HttpRequest,
  type HttpResponse,
  type IngestLine,
} from "convoseg/connectors";

/**
 * Five minutes: a rotated secret is read within that, and a warm function reads it about once
 * per five minutes instead of per request (the Powertools cache, as the extract function uses).
 */
const SECRET_MAX_AGE_SECONDS = 300;

/** Read once at cold start: a missing setting fails the first invocation with its name. */
export function requiredEnvironment(platform: string, name: string): string {
  const value = process.env[name];
  if (value === undefined || value.trim() === "") {
    throw new Error(
      `${platform}: environment variable ${name} must be set (got ${JSON.stringify(value)})`,
    );
  }
  return value;
}

/** A secret's string, cached by the Powertools utility. */
export async function secretString(id: string): Promise<string> {
  const value = await getSecret(id, { maxAge: SECRET_MAX_AGE_SECONDS });
  if (typeof value !== "string" || value === "") {
    throw new TypeError(`the secret ${id} is empty or not a string`);
  }
  return value;
}

/** The parts every receiver takes: claims, the queue, metrics, the log and its chats. */
export interface ReceiverParts {
  scope: ChatScope;
  claims: EventClaims;
  send: (line: IngestLine) => Promise<void>;
  metrics: { add(name: ConnectorMetric, value: number): void };
  log: ConnectorLog;
}

/**
 * The receiver's parts from INGEST_QUEUE_URL and CLAIMS_TABLE, and its Lambda handler once
 * `receive` is built from them.
 */
export function webhookFunction(platform: "slack" | "telegram"): {
  parts: ReceiverParts;
  handler: (
    receive: (request: HttpRequest) => Promise<HttpResponse>,
  ) => (event: LambdaFunctionURLEvent) => Promise<LambdaFunctionURLResult>;
} {
  const queueUrl = requiredEnvironment(platform, "INGEST_QUEUE_URL");
  const claimsTable = requiredEnvironment(platform, "CLAIMS_TABLE");
  const metrics = new Metrics({ namespace: "convoseg", serviceName: platform });
  // The client's own endpoint, not the URL's host, as the other functions do: the same host in
  // AWS, the emulator's locally.
  const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });
  const parts: ReceiverParts = {
    scope: chatScopeFrom("CHANNELS"),
    claims: new DynamoDbEventClaims({
      client: new DynamoDBClient({}),
      tableName: claimsTable,
      platform,
    }),
    send: async (line) => {
      await sqs.send(
        new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(line) }),
      );
    },
    metrics: { add: (name, value) => metrics.addMetric(name, MetricUnit.Count, value) },
    log: new Logger({ serviceName: `convoseg-${platform}` }),
  };
  return { parts, handler: functionUrlHandler(metrics) };
}

/**
 * The chats an endpoint takes: `variable` lists them, comma-separated (unset: every group chat);
 * PRIVATE_CHATS=true also takes one-to-one chats and DMs.
 */
export function chatScopeFrom(variable: string): ChatScope {
  const listed = process.env[variable]
    ?.split(",")
    .map((id) => id.trim())
    .filter((id) => id !== "");
  return {
    ...(listed !== undefined && listed.length > 0 ? { channels: new Set(listed) } : {}),
    privateChats: process.env.PRIVATE_CHATS === "true",
  };
}

/** A Function URL's Lambda handler around `receive`, publishing the metrics after each request. */
export function functionUrlHandler(metrics: Metrics) {
  return (receive: (request: HttpRequest) => Promise<HttpResponse>) =>
    async (event: LambdaFunctionURLEvent): Promise<LambdaFunctionURLResult> => {
      try {
        // The body as the platform signed it: a Function URL hands over binary (and some text)
        // as base64.
        const body = Buffer.from(event.body ?? "", event.isBase64Encoded ? "base64" : "utf8");
        return await receive({ headers: event.headers ?? {}, body });
      } finally {
        if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
      }
    };
}
