import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import type { Context } from "aws-lambda";
import {
  readSegmentConfig,
  runTick,
  type TickSummary,
  tickDependencies,
} from "../../lib/pipeline/index.js";

/** Read at cold start: a bad setting fails the first invocation, naming the variable. */
const config = readSegmentConfig(process.env);
const metrics = new Metrics({ namespace: "convoseg", serviceName: "segmenter" });
const deps = tickDependencies(config, {
  dynamodb: new DynamoDBClient({}),
  sqs: new SQSClient({}),
  logger: new Logger({ serviceName: "convoseg-segmenter" }),
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

/**
 * The scheduled tick (EventBridge). Takes no new channel once less than the budget margin is
 * left of the invocation, so that the rest waits for the next tick instead of a timeout.
 */
export async function handler(_event: unknown, context: Context): Promise<TickSummary> {
  const deadline = Date.now() + context.getRemainingTimeInMillis() - config.budgetMarginMs;
  try {
    return await runTick(deps, () => Date.now() >= deadline);
  } finally {
    metrics.publishStoredMetrics();
  }
}
