/**
 * The whole pipeline on local emulators: the messages and channels tables, the segment queue,
 * ingestion, and the tick, wired exactly as the Lambda functions wire them (`functions/`), on a
 * clock the caller controls. Used by `npm start -- run`, the integration tests and the pipeline
 * benchmark.
 */
import { randomBytes } from "node:crypto";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { createMessagesTable, DynamoDbStore } from "../lib/history/index.js";
import { ChannelPositions, type IngestResult, ingest } from "../lib/ingest/index.js";
import {
  DEFAULT_MAX_BODY_BYTES,
  parseSegmentBody,
  type SegmentMessageV1,
} from "../lib/pipeline/contract/index.js";
import {
  dispatchTick,
  emptyTickSummary,
  type PipelineLogger,
  type PipelineMetrics,
  runShare,
  runTick,
  type SegmentFunctionConfig,
  type ShareRun,
  type TickBudget,
  type TickSettings,
  type TickSummary,
  tickDependencies,
} from "../lib/pipeline/index.js";
import { createChannelsTable, DUE_SHARDS } from "../lib/pipeline/schema/index.js";
import { DynamoDbChannelStore } from "../lib/pipeline/store/index.js";
import { type BatchHandler, LocalEventSource } from "./event-source.js";
import { createSegmentQueue, drainQueue } from "./sqs.js";

export interface LocalPipelineOptions {
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
  settings: TickSettings;
  fifo?: boolean;
  maxBodyBytes?: number;
  /** Prefix of the table and queue names; a random suffix keeps runs apart. */
  prefix?: string;
  metrics?: PipelineMetrics;
  logger?: PipelineLogger;
  /** Wall clock for arrival positions and leases (default: the real one). */
  wallNow?: () => number;
  /**
   * Gives the segment queue a dead-letter queue for a consumer attached with `consumeWith`: a
   * segment goes there after this many failed deliveries (default: no dead-letter queue).
   */
  maxReceiveCount?: number;
  /** The due index's shard count for ingestion and the tick (default 4), and a previous one. */
  dueShards?: number;
  previousDueShards?: number;
  /**
   * Workers a tick fans out to (default 1: one tick does all). Each runs in this process as the
   * worker function runs its share (`runShare`), started by the dispatcher's code.
   */
  workers?: number;
}

const quiet: PipelineLogger = { info() {}, warn() {}, error() {} };

/** Counts every metric the tick reports, by name. */
export class MetricTotals implements PipelineMetrics {
  readonly totals = new Map<string, number>();
  add(name: string, value: number): void {
    this.totals.set(name, (this.totals.get(name) ?? 0) + value);
  }
  get(name: string): number {
    return this.totals.get(name) ?? 0;
  }
}

export class LocalPipeline {
  /** The messages table, written at positions from the channels table as ingestion does. */
  readonly messages: DynamoDbStore;
  readonly channels: DynamoDbChannelStore;
  /** The pipeline clock that ingestion's due times are in: the `now` of the last `ingest`. */
  private ingestNow = 0;
  private consumer: LocalEventSource | undefined;

  private constructor(
    private readonly options: LocalPipelineOptions,
    readonly config: SegmentFunctionConfig,
    readonly deadLetterQueueUrl: string | undefined,
  ) {
    this.messages = new DynamoDbStore({
      client: options.dynamodb,
      tableName: config.messagesTable,
      positions: new ChannelPositions({
        client: options.dynamodb,
        tableName: config.channelsTable,
        now: () => this.ingestNow,
        dueShards: config.dueShards,
      }),
    });
    this.channels = new DynamoDbChannelStore({
      client: options.dynamodb,
      tableName: config.channelsTable,
      dueShards: config.dueShards,
      previousDueShards: config.previousDueShards,
    });
  }

  /**
   * The same tables and queue with another due index shard count: a deployment after a change
   * of `dueShards`, or a writer still on the old count during its rollout. No consumer.
   */
  withDueShards(dueShards: number, previousDueShards?: number): LocalPipeline {
    return new LocalPipeline(
      { ...this.options, dueShards, previousDueShards },
      { ...this.config, dueShards, previousDueShards: previousDueShards ?? null },
      this.deadLetterQueueUrl,
    );
  }

  /** Creates fresh tables and a fresh queue on the emulators the clients point at. */
  static async create(options: LocalPipelineOptions): Promise<LocalPipeline> {
    const name = `${options.prefix ?? "convoseg"}-${randomBytes(4).toString("hex")}`;
    const fifo = options.fifo ?? true;
    const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    await createMessagesTable(options.dynamodb, `${name}-messages`);
    await createChannelsTable(options.dynamodb, `${name}-channels`);
    const deadLetterQueueUrl =
      options.maxReceiveCount === undefined
        ? undefined
        : await createSegmentQueue(options.sqs, `${name}-segments-dlq`, { fifo, maxBodyBytes });
    const queueUrl = await createSegmentQueue(options.sqs, `${name}-segments`, {
      fifo,
      maxBodyBytes,
    });
    return new LocalPipeline(
      options,
      {
        messagesTable: `${name}-messages`,
        channelsTable: `${name}-channels`,
        queueUrl,
        fifo,
        maxBodyBytes,
        budgetMarginMs: 0,
        dueShards: options.dueShards ?? DUE_SHARDS,
        previousDueShards: options.previousDueShards ?? null,
        workers: options.workers ?? 1,
        workerFunction: null,
        settings: options.settings,
      },
      deadLetterQueueUrl,
    );
  }

  /**
   * From now on the queue is consumed by `handler` as Lambda's event source would run it:
   * `drain` hands it what arrives, deletes what it handled and retries what failed.
   */
  consumeWith(handler: BatchHandler): void {
    if (this.deadLetterQueueUrl === undefined || this.options.maxReceiveCount === undefined) {
      throw new Error("a consumer needs the pipeline created with maxReceiveCount");
    }
    this.consumer = new LocalEventSource({
      sqs: this.options.sqs,
      queueUrl: this.config.queueUrl,
      handler,
      deadLetters: {
        queueUrl: this.deadLetterQueueUrl,
        maxReceiveCount: this.options.maxReceiveCount,
      },
    });
  }

  /**
   * With a consumer attached, waits until the queue is empty: every segment handled, or moved
   * to the dead-letter queue after its last receive. `onWait` reports the messages still there.
   */
  async finishConsuming(onWait?: (pending: number) => void): Promise<void> {
    await this.consumer?.drain(onWait);
  }

  /** Receives and deletes what the dead-letter queue holds: the segments given up on. */
  async deadLetters(): Promise<SegmentMessageV1[]> {
    if (this.deadLetterQueueUrl === undefined) return [];
    const received = await drainQueue(this.options.sqs, this.deadLetterQueueUrl);
    return received.map((message) => parseSegmentBody(message.Body ?? ""));
  }

  /** Ingests chat messages (the JSON-lines format) as the ingest Lambda does, at time `now`. */
  ingest(inputs: readonly unknown[], now: number): Promise<IngestResult> {
    this.ingestNow = now;
    return ingest(this.messages, inputs);
  }

  /**
   * One scheduled tick at pipeline time `now`, within `budget` (default: every due channel): with
   * several workers, the dispatcher starts one per share and this waits for all of them (the
   * budget shared by all); the summary adds theirs up.
   */
  async tick(now: number, budget?: TickBudget): Promise<TickSummary> {
    const deps = tickDependencies(this.config, {
      dynamodb: this.options.dynamodb,
      sqs: this.options.sqs,
      metrics: this.options.metrics ?? new MetricTotals(),
      logger: this.options.logger ?? quiet,
      now: () => now,
      wallNow: this.options.wallNow,
    });
    if (this.config.workers === 1) return runTick(deps, budget);
    const runs: Promise<ShareRun>[] = [];
    const wall = deps.wallNow();
    await dispatchTick(
      {
        invoke: async (share) => {
          runs.push(runShare(deps, share, { until: wall + this.config.settings.leaseMs, budget }));
        },
      },
      this.config.workers,
      deps,
    );
    return addUp(await Promise.all(runs));
  }

  /**
   * Receives and deletes every segment message waiting in the queue, in receive order. With a
   * consumer attached, hands them to it and returns those received for the first time (a
   * retried one was returned when it first arrived).
   */
  async drain(): Promise<SegmentMessageV1[]> {
    const received =
      this.consumer === undefined
        ? await drainQueue(this.options.sqs, this.config.queueUrl)
        : await this.consumer.poll();
    return received.map((message) => parseSegmentBody(message.Body ?? ""));
  }
}

/** The workers' summaries as one tick's (a busy share counts as stopped early: it did nothing). */
function addUp(runs: readonly ShareRun[]): TickSummary {
  const total = emptyTickSummary(runs.map((run) => run.tick?.tickId ?? "busy").join(","));
  for (const { tick } of runs) {
    total.channels += tick?.channels ?? 0;
    total.segments += tick?.segments ?? 0;
    total.late += tick?.late ?? 0;
    total.dropped += tick?.dropped ?? 0;
    total.errors += tick?.errors ?? 0;
    total.stoppedEarly ||= tick === null || tick.stoppedEarly;
  }
  return total;
}
