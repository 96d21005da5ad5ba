import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import type { Context, SQSBatchResponse, SQSEvent } from "aws-lambda";
import { readExtractConfig } from "convoseg/knowledge/config";
import {
  CircuitBreaker,
  extractDependencies,
  queueReextraction,
  segmentConsumer,
} from "convoseg/knowledge/write";
import { deployedSearchIndexer, searchEnvironment } from "convoseg/search/lancedb";
import { apiKeyOf } from "../model-key.js";

/** Read at cold start: bad settings fail the first invocation, naming every variable at fault. */
const config = readExtractConfig(process.env);
const metrics = new Metrics({ namespace: "convoseg", serviceName: "extractor" });
const logger = new Logger({ serviceName: "convoseg-extractor" });

// The queue URL is built from the event's ARN; the client's own endpoint is the one to call
// (the same host in AWS, the emulator's in local runs and tests).
const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });

const dynamodb = new DynamoDBClient({});
/** With `SEARCH_INDEX_URI` (the stack's search setting), each result's documents are indexed. */
const search = deployedSearchIndexer({
  ...searchEnvironment(process.env),
  client: dynamodb,
  resultsTable: config.resultsTable,
  messagesTable: config.messagesTable,
});

const consumer = segmentConsumer(
  extractDependencies(config, {
    dynamodb,
    ...(search && { search }),
    sqs,
    // A change during an extraction past the share sends the segment back, as ingestion does.
    ...(config.segmentQueueUrl && {
      requestReextraction: queueReextraction(sqs, config.segmentQueueUrl, config.messagesTable),
    }),
    apiKey: apiKeyOf(config.apiKey),
    // One per execution environment: its calls stop for a cool-down when the provider keeps failing.
    breaker: new CircuitBreaker(config.breaker),
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
);

/**
 * The segment queue's event source: extracts each segment, reports partial batch failures.
 *
 * @public The Lambda runtime calls it: infra names this file as the function's entry.
 */
export async function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  try {
    return await consumer(event, context);
  } finally {
    metrics.publishStoredMetrics();
  }
}
