/**
 * What the scheduled tick and the fan-out worker share: the configuration, read at cold start
 * (a bad setting fails the first invocation, naming the variable), the metrics and the tick's
 * wiring to DynamoDB and SQS.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { readSegmentConfig, tickDependencies } from "convoseg/pipeline";

export const config = readSegmentConfig(process.env);
export const metrics = new Metrics({ namespace: "convoseg", serviceName: "segmenter" });
const logger = new Logger({ serviceName: "convoseg-segmenter" });
export const deps = tickDependencies(config, {
  dynamodb: new DynamoDBClient({}),
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
