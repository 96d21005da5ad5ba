import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDbStore } from "../../history/dynamodb/index.js";
import type { SegmentFunctionConfig } from "./config.js";
import { SqsSegmentSender } from "./sqs-delivery.js";
import { DynamoDbChannelStore } from "./store/dynamodb-channel-store.js";
import type { PipelineLogger, PipelineMetrics, TickDependencies } from "./tick-dependencies.js";

export interface TickEnvironment {
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
  metrics: PipelineMetrics;
  logger: PipelineLogger;
  /** The pipeline clock; the wall clock unless a local run simulates time. */
  now?: () => number;
  wallNow?: () => number;
}

/**
 * Wires the tick to AWS from the function's configuration: the Lambda handler, the local run
 * (`npm start -- run`, on emulators and a simulated clock) and the benchmarks share it, so all
 * run the same code.
 */
export function tickDependencies(
  config: SegmentFunctionConfig,
  env: TickEnvironment,
): TickDependencies {
  return {
    messages: new DynamoDbStore({ client: env.dynamodb, tableName: config.messagesTable }),
    channels: new DynamoDbChannelStore({
      client: env.dynamodb,
      tableName: config.channelsTable,
      dueShards: config.dueShards,
      previousDueShards: config.previousDueShards,
      metrics: env.metrics,
    }),
    sink: new SqsSegmentSender({ client: env.sqs, queueUrl: config.queueUrl, fifo: config.fifo }),
    bodies: { maxBodyBytes: config.maxBodyBytes, tableName: config.messagesTable },
    metrics: env.metrics,
    logger: env.logger,
    settings: config.settings,
    now: env.now ?? Date.now,
    wallNow: env.wallNow ?? Date.now,
  };
}
