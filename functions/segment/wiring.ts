import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDbStore } from "../../lib/history/dynamodb/store.js";
import { ChannelStore } from "../../lib/pipeline/channel-store.js";
import type { SegmentFunctionConfig } from "../../lib/pipeline/config.js";
import { segmentBody } from "../../lib/pipeline/segment-message.js";
import { SqsSegmentSender } from "../../lib/pipeline/sqs-delivery.js";
import type { PipelineLogger, PipelineMetrics, TickDependencies } from "../../lib/pipeline/tick.js";

export interface Environment {
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
  metrics: PipelineMetrics;
  logger: PipelineLogger;
  /** The pipeline clock; the wall clock unless a local run simulates time. */
  now?: () => number;
  wallNow?: () => number;
}

/**
 * Wires the tick to AWS from the function's configuration: the Lambda handler and the local run
 * (`npm start -- run`, on emulators and a simulated clock) share it, so both run the same code.
 */
export function tickDependencies(
  config: SegmentFunctionConfig,
  env: Environment,
): TickDependencies {
  return {
    messages: new DynamoDbStore({ client: env.dynamodb, tableName: config.messagesTable }),
    channels: new ChannelStore({ client: env.dynamodb, tableName: config.channelsTable }),
    sink: new SqsSegmentSender({ client: env.sqs, queueUrl: config.queueUrl, fifo: config.fifo }),
    body: (segment, messages) =>
      segmentBody(segment, messages, {
        maxBodyBytes: config.maxBodyBytes,
        tableName: config.messagesTable,
      }),
    metrics: env.metrics,
    logger: env.logger,
    settings: config.settings,
    now: env.now ?? Date.now,
    wallNow: env.wallNow ?? Date.now,
  };
}
