/**
 * What the scheduled tick and the fan-out worker share: the configuration, read at cold start
 * (a bad setting fails the first invocation, naming the variable), the metrics and the tick's
 * wiring to DynamoDB and SQS.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { readExtractConfig } from "convoseg/knowledge/config";
import { CircuitBreaker, linkAdvisorOf } from "convoseg/knowledge/write";
import { readSegmentConfig, tickDependencies } from "convoseg/pipeline";
import { apiKeyOf } from "../model-key.js";

export const config = readSegmentConfig(process.env);
export const metrics = new Metrics({ namespace: "convoseg", serviceName: "segmenter" });
const logger = new Logger({ serviceName: "convoseg-segmenter" });
const dynamodb = new DynamoDBClient({});
export const deps = tickDependencies(config, {
  dynamodb,
  sqs: new SQSClient({}),
  logger,
  metrics: {
    add: (name, value) =>
      metrics.addMetric(
        name,
        name.endsWith("Ms")
          ? MetricUnit.Milliseconds
          : name.endsWith("Bytes")
            ? MetricUnit.Bytes
            : MetricUnit.Count,
        value,
      ),
  },
});

// With ASK_LINKS the extraction's model settings are read too: a bad one fails the cold start.
if (config.askLinks) {
  const extract = readExtractConfig(process.env);
  deps.advisor = linkAdvisorOf(extract, {
    dynamodb,
    apiKey: apiKeyOf(extract.apiKey),
    breaker: new CircuitBreaker(extract.breaker),
    logger,
    // The advice's own counts are the tick's (LinksAsked, …); extraction's are not reported here.
    metrics: { add() {} },
  });
}
