import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { getSecret } from "@aws-lambda-powertools/parameters/secrets";
import { getParameter } from "@aws-lambda-powertools/parameters/ssm";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import type { Context, SQSBatchResponse, SQSEvent } from "aws-lambda";
import {
  type ApiKeySource,
  extractDependencies,
  readExtractConfig,
  segmentConsumer,
} from "../../lib/knowledge/index.js";

/** Read at cold start: bad settings fail the first invocation, naming every variable at fault. */
const config = readExtractConfig(process.env);
const metrics = new Metrics({ namespace: "convoseg", serviceName: "extractor" });
const logger = new Logger({ serviceName: "convoseg-extractor" });

/** The API key, fetched once per cold start from where the configuration says it is kept. */
async function apiKeyOf(source: ApiKeySource | undefined): Promise<string | undefined> {
  if (source === undefined) return undefined;
  const value =
    source.kind === "secret"
      ? await getSecret(source.id, { maxAge: 3600 })
      : await getParameter(source.name, { decrypt: true, maxAge: 3600 });
  if (typeof value !== "string" || value === "") {
    throw new Error(
      `the OpenAI API key at ${source.kind === "secret" ? `secret ${source.id}` : `parameter ${source.name}`} is empty or not a string`,
    );
  }
  return value;
}

const consumer = apiKeyOf(config.apiKey).then((apiKey) =>
  segmentConsumer(
    extractDependencies(config, {
      dynamodb: new DynamoDBClient({}),
      // The queue URL is built from the event's ARN; the client's own endpoint is the one to call
      // (the same host in AWS, the emulator's in local runs and tests).
      sqs: new SQSClient({ useQueueUrlAsEndpoint: false }),
      apiKey,
      logger,
      metrics: {
        add: (name, value) =>
          metrics.addMetric(
            name,
            name === "WindowLatency" ? MetricUnit.Milliseconds : MetricUnit.Count,
            value,
          ),
      },
    }),
  ),
);

/** The segment queue's event source: extracts each segment, reports partial batch failures. */
export async function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  try {
    return await (await consumer)(event, context);
  } finally {
    metrics.publishStoredMetrics();
  }
}
