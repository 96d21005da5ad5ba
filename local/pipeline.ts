/**
 * The whole pipeline on local emulators: the messages and channels tables, the segment queue,
 * ingestion, the tick and, when asked for, extraction (the results table and the consumer of
 * the segment queue), wired exactly as the Lambda functions wire them (`functions/`), on a clock
 * the caller controls. Used by `npm start -- run`, the integration tests and the benchmarks.
 */
import { randomBytes } from "node:crypto";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { createMessagesTable, DynamoDbStore } from "convoseg/history/dynamodb";
import { ChannelPositions, type IngestResult, ingest } from "convoseg/ingest";
import { createResultsTable } from "convoseg/knowledge/store";
import type { LinkAdvisor } from "convoseg/linker";
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
} from "convoseg/pipeline";
import {
  DEFAULT_MAX_BODY_BYTES,
  fifoId,
  parseSegmentBody,
  type SegmentMessageV1,
} from "convoseg/pipeline/contract";
import { createChannelsTable, DUE_SHARDS } from "convoseg/pipeline/schema";
import { DynamoDbChannelStore } from "convoseg/pipeline/store";
import { LocalEventSource } from "./event-source.js";
import {
  type LocalExtraction,
  type LocalExtractionOptions,
  localExtraction,
  localLinkAdvisor,
} from "./extraction.js";
import type { LedgerEntry, SegmentLedger } from "./ledger.js";
import { createSegmentQueue, drainQueue } from "./sqs.js";

export interface LocalPipelineOptions {
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
  settings: TickSettings;
  fifo?: boolean;
  maxBodyBytes?: number;
  /** Prefix of the table and queue names; a random suffix keeps runs apart. */
  prefix?: string;
  /**
   * Tables that exist already (a workspace's), used instead of fresh ones; the queues are still
   * the pipeline's own.
   */
  tables?: { messagesTable: string; channelsTable: string; resultsTable: string };
  /** Records each segment before the tick sends it (a workspace's ledger, ./ledger.ts). */
  ledger?: SegmentLedger;
  metrics?: PipelineMetrics;
  logger?: PipelineLogger;
  /** Wall clock for arrival positions and leases (default: the real one). */
  wallNow?: () => number;
  /**
   * Extracts the delivered segments as the extraction function does: a results table, and the
   * consumer on the segment queue with a dead-letter queue for a segment that failed
   * `maxReceiveCount` times. Each `extract` runs it (default: no extraction).
   */
  extraction?: LocalExtractionOptions & { maxReceiveCount: number };
  /**
   * The tick asks extraction's model about the links the reply linker is least sure of
   * (`run --ask-links`; docs/conversations.md). Needs `extraction` with a model.
   */
  askLinks?: boolean;
  /** The due index's shard count for ingestion and the tick (default 4), and a previous one. */
  dueShards?: number;
  previousDueShards?: number;
  /**
   * Workers a tick fans out to (default 1: one tick does all). Each runs in this process as the
   * worker function runs its share (`runShare`), started by the dispatcher's code.
   */
  workers?: number;
}

/** A pipeline's extraction step. */
interface Extractor {
  /** The segment queue's consumer, as Lambda's event source runs the extraction function. */
  source: LocalEventSource;
  deadLetterQueueUrl: string;
  extraction: LocalExtraction;
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
    private readonly extractor?: Extractor,
    private readonly advisor?: LinkAdvisor,
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
   * of `dueShards`, or a writer still on the old count during its rollout. No extraction.
   */
  withDueShards(dueShards: number, previousDueShards?: number): LocalPipeline {
    return new LocalPipeline(
      { ...this.options, dueShards, previousDueShards, extraction: undefined },
      { ...this.config, dueShards, previousDueShards: previousDueShards ?? null },
    );
  }

  /**
   * Creates fresh tables (with extraction, the results table too) and a fresh queue (and its
   * dead-letter queue) on the emulators the clients point at.
   */
  static async create(options: LocalPipelineOptions): Promise<LocalPipeline> {
    const name = `${options.prefix ?? "convoseg"}-${randomBytes(4).toString("hex")}`;
    const fifo = options.fifo ?? true;
    const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    const tables = options.tables ?? {
      messagesTable: `${name}-messages`,
      channelsTable: `${name}-channels`,
      resultsTable: `${name}-results`,
    };
    if (options.tables === undefined) {
      await createMessagesTable(options.dynamodb, tables.messagesTable);
      await createChannelsTable(options.dynamodb, tables.channelsTable);
      if (options.extraction) await createResultsTable(options.dynamodb, tables.resultsTable);
    }
    const deadLetterQueueUrl =
      options.extraction &&
      (await createSegmentQueue(options.sqs, `${name}-segments-dlq`, { fifo, maxBodyBytes }));
    const queueUrl = await createSegmentQueue(options.sqs, `${name}-segments`, {
      fifo,
      maxBodyBytes,
    });
    let extractor: Extractor | undefined;
    if (options.extraction && deadLetterQueueUrl) {
      const { handler, extraction } = localExtraction(tables, options.extraction, {
        sqs: options.sqs,
        queueUrl: deadLetterQueueUrl,
        maxAttempts: options.extraction.maxReceiveCount,
      });
      const source = new LocalEventSource({
        sqs: options.sqs,
        queueUrl,
        handler,
        deadLetters: {
          queueUrl: deadLetterQueueUrl,
          maxReceiveCount: options.extraction.maxReceiveCount,
        },
        stopped: () => extraction.stopped !== undefined,
      });
      extractor = { source, deadLetterQueueUrl, extraction };
    }
    const advisor =
      options.askLinks === true && options.extraction
        ? localLinkAdvisor(tables, options.extraction)
        : undefined;
    return new LocalPipeline(
      options,
      {
        messagesTable: tables.messagesTable,
        channelsTable: tables.channelsTable,
        queueUrl,
        fifo,
        maxBodyBytes,
        budgetMarginMs: 0,
        dueShards: options.dueShards ?? DUE_SHARDS,
        previousDueShards: options.previousDueShards ?? null,
        workers: options.workers ?? 1,
        workerFunction: null,
        askLinks: advisor !== undefined,
        settings: options.settings,
      },
      extractor,
      advisor,
    );
  }

  /** With extraction: its results table, a reader of it, and the consumer's metrics. */
  get extraction(): LocalExtraction | undefined {
    return this.extractor?.extraction;
  }

  /**
   * Receives and deletes every segment message waiting in the queue, in receive order, without
   * extracting them.
   */
  async drain(): Promise<SegmentMessageV1[]> {
    const received = await drainQueue(this.options.sqs, this.config.queueUrl);
    return received.map((message) => parseSegmentBody(message.Body ?? ""));
  }

  /**
   * Hands the segments waiting in the queue to extraction, as Lambda's event source would:
   * those it handled are deleted, the failed ones come back after a backoff (or go to the
   * dead-letter queue after their last receive). Returns the segments received for the first
   * time, in receive order (a retried one was returned when it first arrived).
   */
  async extract(): Promise<SegmentMessageV1[]> {
    const received = await this.extractorOrThrow().source.poll();
    return received.map((message) => parseSegmentBody(message.Body ?? ""));
  }

  /**
   * Waits until extraction has emptied the queue: every segment extracted, or moved to the
   * dead-letter queue after its last receive. `onWait` reports the messages still there.
   */
  async finishExtraction(onWait?: (pending: number) => void): Promise<void> {
    await this.extractorOrThrow().source.drain(onWait);
  }

  /** Receives and deletes what the dead-letter queue holds: the segments extraction gave up on. */
  async deadLetters(): Promise<SegmentMessageV1[]> {
    if (this.extractor === undefined) return [];
    const received = await drainQueue(this.options.sqs, this.extractor.deadLetterQueueUrl);
    return received.map((message) => parseSegmentBody(message.Body ?? ""));
  }

  private extractorOrThrow(): Extractor {
    if (this.extractor === undefined) {
      throw new Error("this pipeline extracts nothing: create it with extraction");
    }
    return this.extractor;
  }

  /**
   * Sends segments delivered by an earlier command (the ledger's bodies) to this pipeline's
   * queue again, as the tick sends them (group: channel; deduplication: segment id).
   */
  async resend(entries: readonly LedgerEntry[]): Promise<void> {
    for (const { channel, segmentId, body } of entries) {
      await this.options.sqs.send(
        new SendMessageCommand({
          QueueUrl: this.config.queueUrl,
          MessageBody: body,
          ...(this.config.fifo
            ? { MessageGroupId: fifoId(channel), MessageDeduplicationId: fifoId(segmentId) }
            : {}),
        }),
      );
    }
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
    if (this.advisor !== undefined) deps.advisor = this.advisor;
    const { ledger } = this.options;
    if (ledger !== undefined) {
      const sink = deps.sink;
      deps.sink = {
        send: async (entries) => {
          await ledger.record(entries);
          await sink.send(entries);
        },
      };
    }
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
