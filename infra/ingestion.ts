import { Duration } from "aws-cdk-lib";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { PipelineFunction } from "./function.js";
import { QueueWithDeadLetters } from "./queues.js";
import type { Storage } from "./storage.js";

export interface IngestionProps {
  storage: Storage;
  logRetention: RetentionDays;
  /** The ingest queue's name; generated when omitted. */
  queueName?: string;
  /** The due index's shard count (`dueShards`), the tick's. */
  dueShards: number;
}

const TIMEOUT = Duration.seconds(30);

/**
 * The ingestion Lambda: chat messages in (direct invocation, or the ingest queue: one chat
 * message per body, failed records retried and then dead-lettered), history store writes out.
 */
export class Ingestion extends Construct {
  readonly function: PipelineFunction;
  readonly queue: QueueWithDeadLetters;

  constructor(scope: Construct, id: string, props: IngestionProps) {
    super(scope, id);
    this.function = new PipelineFunction(this, "Ingest", {
      entry: "functions/ingest/handler.ts",
      description: "convoseg ingestion: chat messages to the history store",
      environment: {
        MESSAGES_TABLE: props.storage.messages.tableName,
        CHANNELS_TABLE: props.storage.channels.tableName,
        DUE_SHARDS: String(props.dueShards),
        POWERTOOLS_SERVICE_NAME: "convoseg-ingest",
      },
      timeout: TIMEOUT,
      memorySize: 256,
      logRetention: props.logRetention,
    });
    props.storage.grantIngest(this.function.role);
    this.queue = new QueueWithDeadLetters(this, "Messages", {
      queueName: props.queueName,
      // AWS's advice for Lambda event sources: six times the function timeout, so that retries
      // of a throttled batch do not make its messages visible again while still in progress.
      visibilityTimeout: Duration.seconds(TIMEOUT.toSeconds() * 6),
    });
    this.function.function.addEventSource(
      new SqsEventSource(this.queue.queue, {
        // Messages wait for a tick anyway: fewer, fuller invocations are cheaper.
        batchSize: 100,
        maxBatchingWindow: Duration.seconds(5),
        reportBatchItemFailures: true,
      }),
    );
  }
}
