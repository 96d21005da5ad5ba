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
import { type IngestResult, ingest } from "../lib/ingest/index.js";
import {
  ChannelPositions,
  createChannelsTable,
  DEFAULT_MAX_BODY_BYTES,
  DynamoDbChannelStore,
  type PipelineLogger,
  type PipelineMetrics,
  parseSegmentBody,
  runTick,
  type SegmentFunctionConfig,
  type SegmentMessageV1,
  type TickSettings,
  type TickSummary,
  tickDependencies,
} from "../lib/pipeline/index.js";
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

  private constructor(
    private readonly options: LocalPipelineOptions,
    readonly config: SegmentFunctionConfig,
  ) {
    this.messages = new DynamoDbStore({
      client: options.dynamodb,
      tableName: config.messagesTable,
      positions: new ChannelPositions({
        client: options.dynamodb,
        tableName: config.channelsTable,
        now: () => this.ingestNow,
      }),
    });
    this.channels = new DynamoDbChannelStore({
      client: options.dynamodb,
      tableName: config.channelsTable,
    });
  }

  /** Creates fresh tables and a fresh queue on the emulators the clients point at. */
  static async create(options: LocalPipelineOptions): Promise<LocalPipeline> {
    const name = `${options.prefix ?? "convoseg"}-${randomBytes(4).toString("hex")}`;
    const fifo = options.fifo ?? true;
    const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    await createMessagesTable(options.dynamodb, `${name}-messages`);
    await createChannelsTable(options.dynamodb, `${name}-channels`);
    const queueUrl = await createSegmentQueue(options.sqs, `${name}-segments`, {
      fifo,
      maxBodyBytes,
    });
    return new LocalPipeline(options, {
      messagesTable: `${name}-messages`,
      channelsTable: `${name}-channels`,
      queueUrl,
      fifo,
      maxBodyBytes,
      budgetMarginMs: 0,
      settings: options.settings,
    });
  }

  /** Ingests chat messages (the JSON-lines format) as the ingest Lambda does, at time `now`. */
  ingest(inputs: readonly unknown[], now: number): Promise<IngestResult> {
    this.ingestNow = now;
    return ingest(this.messages, inputs);
  }

  /** One scheduled tick at pipeline time `now`. */
  tick(now: number, shouldStop?: () => boolean): Promise<TickSummary> {
    const deps = tickDependencies(this.config, {
      dynamodb: this.options.dynamodb,
      sqs: this.options.sqs,
      metrics: this.options.metrics ?? new MetricTotals(),
      logger: this.options.logger ?? quiet,
      now: () => now,
      wallNow: this.options.wallNow,
    });
    return runTick(deps, shouldStop);
  }

  /** Receives and deletes every segment message waiting in the queue, in receive order. */
  async drain(): Promise<SegmentMessageV1[]> {
    const received = await drainQueue(this.options.sqs, this.config.queueUrl);
    return received.map((message) => parseSegmentBody(message.Body ?? ""));
  }
}
