import { Duration, Validations } from "aws-cdk-lib";
import { Rule, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { Queue } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { type ConvosegConfig, extractEnvironment, segmentEnvironment } from "./config.js";
import { modelStatements } from "./extraction.js";
import { PipelineFunction } from "./function.js";
import { LAST_RESORT_RECEIVES, QueueWithDeadLetters, secureQueue } from "./queues.js";
import type { Storage } from "./storage.js";

export interface SegmentationProps {
  /** The tables the tick reads and writes: messages, and the channels' state. */
  readonly storage: Storage;
  /** The validated settings: the schedule, the segmenter's, the queue's and the fan-out's. */
  readonly config: ConvosegConfig;
}

/**
 * The scheduled segmentation tick: an EventBridge rule runs the function every `schedule`; it
 * reads due channels and arrivals from storage and sends closed segments to the segment queue.
 * With `workers` over 1 the scheduled function is a dispatcher that starts the worker function
 * once per share of the due index, and the workers do that work.
 */
export class Segmentation extends Construct {
  readonly segments: QueueWithDeadLetters;
  /** The scheduled function: the whole tick, or with `workers` over 1 the dispatcher. */
  readonly function: PipelineFunction;
  /** The fan-out worker, only with `workers` over 1. */
  readonly worker?: PipelineFunction;
  /** Schedule events EventBridge could not deliver to the function. */
  readonly scheduleDeadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: SegmentationProps) {
    super(scope, id);
    const { config, storage } = props;
    const schedule = Duration.minutes(config.scheduleMinutes);
    this.segments = new QueueWithDeadLetters(this, "Segments", {
      fifo: config.fifo,
      queueName: config.names.segmentQueue,
      // FIFO deduplication uses the segment id the sender sets, not the body (content-based
      // deduplication stays off); the body limit is the one the function packs segments into.
      maxMessageSizeBytes: config.maxBodyBytes,
      // The consumer is the extraction function: AWS's advice for Lambda event sources, six times
      // its timeout (sized for the largest segment's windows), so that retries of a throttled
      // batch do not make its segments visible again while still in progress.
      visibilityTimeout: Duration.millis(config.segmentVisibilityTimeoutMs),
      // The extraction function counts its own attempts and dead-letters a segment itself.
      maxReceiveCount: LAST_RESORT_RECEIVES,
    });
    const segment = segmentEnvironment(config, {
      messagesTable: storage.messages.tableName,
      channelsTable: storage.channels.tableName,
      queueUrl: this.segments.queue.queueUrl,
    });
    // With askLinks the tick calls extraction's model: it reads the same model settings, under
    // its own (LEASE is its own lease).
    const environment = config.askLinks
      ? {
          ...extractEnvironment(config, {
            resultsTable: storage.results.tableName,
            messagesTable: storage.messages.tableName,
          }),
          ...segment,
        }
      : segment;
    const tick = {
      timeout: Duration.millis(config.tickTimeoutMs),
      memorySize: 512,
      logRetention: config.logRetention,
      // A failed or delayed tick is not worth retrying: the next scheduled one does its work.
      retryAttempts: 0,
      maxEventAge: schedule,
    };
    const fannedOut = config.workers > 1;
    if (fannedOut) {
      this.worker = new PipelineFunction(this, "Worker", {
        ...tick,
        entry: "functions/segment/worker.ts",
        description: "convoseg segmentation worker: one share of the due index per tick",
        environment,
        // One worker per share at a time; a share's claim turns away a late duplicate.
        reservedConcurrentExecutions: config.workers,
      });
    }
    this.function = new PipelineFunction(this, "Tick", {
      ...tick,
      entry: "functions/segment/handler.ts",
      description: fannedOut
        ? `convoseg segmentation tick: starts ${config.workers} workers, one per share of the due index`
        : "convoseg segmentation tick: due channels to closed segments on SQS",
      environment: this.worker
        ? { ...environment, WORKER_FUNCTION: this.worker.function.functionName }
        : environment,
      // Overlapping ticks are safe (the channel version fences them) but only waste work.
      reservedConcurrentExecutions: 1,
    });
    // Whoever runs the tick itself reads and writes the tables and sends segments; a dispatcher
    // only starts workers.
    const ticker = this.worker ?? this.function;
    if (this.worker) {
      // The unqualified function only (grantInvoke would add its versions, `:*`).
      this.function.role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ["lambda:InvokeFunction"],
          resources: [this.worker.function.functionArn],
        }),
      );
    }
    storage.grantSegmentation(ticker.role);
    if (config.askLinks) {
      // The model, and extraction's daily token counters it is bounded by.
      for (const statement of modelStatements(ticker, config.extract)) {
        ticker.role.addToPrincipalPolicy(statement);
      }
      storage.grantSpendCounters(ticker.role);
    }
    this.segments.queue.grant(ticker.role, "sqs:SendMessage");
    // Consumers trust what arrives here: only the tick (and the operators named for redrives)
    // may put segments on the queue or its DLQ, whatever else identity policies allow.
    this.segments.onlySenders([ticker.role.roleArn, ...config.segmentQueueSenders]);

    this.scheduleDeadLetterQueue = secureQueue(this, "ScheduleDeadLetters");
    Validations.of(this.scheduleDeadLetterQueue).acknowledge({
      id: "AwsSolutions-SQS3",
      reason:
        "This queue is itself a dead-letter queue: the EventBridge target's, for schedule events that could not be delivered to the function.",
    });
    new Rule(this, "Schedule", {
      description: `convoseg segmentation tick, every ${config.scheduleMinutes} minute(s)`,
      schedule: Schedule.rate(schedule),
      targets: [
        new LambdaFunction(this.function.function, {
          retryAttempts: 3,
          maxEventAge: schedule,
          deadLetterQueue: this.scheduleDeadLetterQueue,
        }),
      ],
    });
  }
}
