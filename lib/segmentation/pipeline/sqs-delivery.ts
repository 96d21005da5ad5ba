/**
 * Delivers closed segments to SQS. On a FIFO queue each segment's group is its channel, so a
 * channel's segments are received in order, and its deduplication id is its segment id, so a
 * resend after a crash is usually absorbed by SQS; consumers dedupe by segment id regardless.
 */

import {
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { type Backoff, backoff, realSleep } from "../../base/backoff/index.js";
import { isTransient } from "../../base/transient/index.js";
import { fifoId } from "./contract/fifo-id.js";
import { PipelineError } from "./errors.js";
import type { SegmentDelivery } from "./types.js";

export interface SqsSegmentSenderOptions {
  client: SQSClient;
  queueUrl: string;
  /** A FIFO queue: send group (channel) and deduplication (segment) ids. */
  fifo: boolean;
  /** Attempts per batch before `send` gives up (default 8). */
  maxAttempts?: number;
  /** Backoff: full jitter over 50 ms * 2^attempt, capped at 5 s. */
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** SendMessageBatch takes 10 entries and, on every queue, a 256 KiB total payload. */
const MAX_BATCH_ENTRIES = 10;
const MAX_BATCH_BYTES = 256 * 1024;
const BASE_DELAY_MS = 50;
const MAX_DELAY_MS = 5_000;
const DEFAULT_MAX_ATTEMPTS = 8;

/** `send` gave up; `confirmed` segments (a prefix of the ones passed, per group) were accepted. */
export class SegmentDeliveryError extends PipelineError {
  override readonly name: string = "SegmentDeliveryError";
  constructor(
    readonly confirmed: number,
    readonly total: number,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      "PIPELINE_DELIVERY_FAILED",
      `sqs delivery: ${confirmed} of ${total} segments confirmed; ${detail}`,
      options,
    );
  }
}

/** An entry SQS did not accept in one attempt, and whether trying again can help. */
interface EntryFailure {
  delivery: SegmentDelivery;
  reason: string;
  retryable: boolean;
  cause?: unknown;
}

/**
 * Sends segments in SendMessageBatch calls, one batch after another, retrying the failed entries
 * of a batch (with backoff) before the next batch goes out: a retried segment is never overtaken
 * by a later batch of its channel. One limit is SQS's: should it fail an entry of a FIFO batch yet
 * accept a later entry of the same group, the retried entry lands behind that one. Whole-request
 * failures (throttling, network), the usual kind, keep order.
 */
export class SqsSegmentSender {
  private readonly client: SQSClient;
  private readonly queueUrl: string;
  private readonly fifo: boolean;
  private readonly maxAttempts: number;
  private readonly pacing: Backoff;

  constructor(options: SqsSegmentSenderOptions) {
    this.client = options.client;
    this.queueUrl = options.queueUrl;
    this.fifo = options.fifo;
    this.maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    this.pacing = {
      baseDelayMs: BASE_DELAY_MS,
      maxDelayMs: MAX_DELAY_MS,
      random: options.random ?? Math.random,
      sleep: options.sleep ?? realSleep,
    };
  }

  /**
   * Sends all entries in order. Throws a {@link SegmentDeliveryError} saying how many were
   * confirmed when an entry is rejected for good or still fails after `maxAttempts`; resending
   * the same segments is safe (same ids). An abort of `signal` propagates as is.
   */
  async send(entries: SegmentDelivery[], signal?: AbortSignal): Promise<void> {
    const progress = { confirmed: 0, total: entries.length };
    for (const batch of batchesOf(entries)) {
      await this.sendBatch(batch, progress, signal);
    }
  }

  private async sendBatch(
    batch: SegmentDelivery[],
    progress: { confirmed: number; total: number },
    signal?: AbortSignal,
  ): Promise<void> {
    let pending = batch;
    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted();
      const failures = await this.attempt(pending, signal);
      progress.confirmed += pending.length - failures.length;
      const [first] = failures;
      if (first === undefined) return;
      const permanent = failures.find((f) => !f.retryable);
      if (permanent !== undefined || attempt >= this.maxAttempts) {
        throw deliveryError(permanent ?? first, failures, attempt, progress);
      }
      pending = failures.map((f) => f.delivery);
      await this.backoff(attempt);
    }
  }

  /** One SendMessageBatch call: the entries it did not accept (all of them if it threw). */
  private async attempt(pending: SegmentDelivery[], signal?: AbortSignal): Promise<EntryFailure[]> {
    let result: SendMessageBatchCommandOutput;
    try {
      result = await this.client.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: pending.map((delivery, i) => this.requestEntry(delivery, i)),
        }),
        { abortSignal: signal },
      );
    } catch (error) {
      if (signal?.aborted) throw error;
      const reason = `${(error as Error).name}: ${(error as Error).message}`;
      const retryable = isTransient(error);
      return pending.map((delivery) => ({ delivery, reason, retryable, cause: error }));
    }
    const accepted = new Set(result.Successful?.map((entry) => entry.Id));
    const failedById = new Map(result.Failed?.map((entry) => [entry.Id, entry]));
    return pending.flatMap((delivery, i) => {
      const id = String(i);
      if (accepted.has(id)) return [];
      const failed = failedById.get(id);
      return [
        {
          delivery,
          reason: failed ? `${failed.Code}: ${failed.Message}` : "SQS reported no result",
          retryable: failed?.SenderFault !== true,
        },
      ];
    });
  }

  /** Batch entry ids only need to be unique within the call: SQS allows few characters in them. */
  private requestEntry(delivery: SegmentDelivery, index: number): SendMessageBatchRequestEntry {
    const entry: SendMessageBatchRequestEntry = { Id: String(index), MessageBody: delivery.body };
    if (this.fifo) {
      entry.MessageGroupId = fifoId(delivery.segment.channel);
      entry.MessageDeduplicationId = fifoId(delivery.segment.segmentId);
    }
    return entry;
  }

  private backoff(attempt: number): Promise<void> {
    return backoff(this.pacing, attempt);
  }
}

/** Consecutive runs of entries within SendMessageBatch's count and payload limits. */
function batchesOf(entries: SegmentDelivery[]): SegmentDelivery[][] {
  const batches: SegmentDelivery[][] = [];
  let current: SegmentDelivery[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = Buffer.byteLength(entry.body, "utf8");
    if (
      current.length === MAX_BATCH_ENTRIES ||
      (current.length > 0 && bytes + size > MAX_BATCH_BYTES)
    ) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** Names the failure that decided (and how many more failed) and the number of attempts made. */
function deliveryError(
  decisive: EntryFailure,
  failures: EntryFailure[],
  attempts: number,
  progress: { confirmed: number; total: number },
): SegmentDeliveryError {
  const { segmentId, channel } = decisive.delivery.segment;
  const more = failures.length > 1 ? ` (and ${failures.length - 1} more)` : "";
  return new SegmentDeliveryError(
    progress.confirmed,
    progress.total,
    `segment ${segmentId} of channel ${channel}${more} not delivered after ${attempts} attempt(s): ${decisive.reason}`,
    { cause: decisive.cause },
  );
}
