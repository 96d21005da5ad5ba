import type { Logger } from "@aws-lambda-powertools/logger";
import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import type { IngestResult, ProducerGrant } from "convoseg/ingest";

/** Direct invocation: a batch of chat messages in the JSON-lines input format. */
interface DirectIngestEvent {
  messages: unknown[];
}

export type IngestEvent = DirectIngestEvent | SQSEvent;
export type IngestResponse = IngestResult | SQSBatchResponse;

/** Ingests a batch of chat messages (`IngestClient.ingest`), within a producer's grant if given. */
export type Ingest = (messages: readonly unknown[], grant?: ProducerGrant) => Promise<IngestResult>;

/** Counts of what edits and deletions did (`EditsApplied`, `DeletionsMissing`, ...). */
type ChangeMetric = `${"Edits" | "Deletions"}${"Applied" | "Unchanged" | "Stale" | "Missing"}`;

/** Where the handler counts changes: EMF metrics in the Lambda, published once per invocation. */
export interface IngestMetrics {
  add(name: ChangeMetric | "DeletedMessagesRefused", value: number): void;
  /** Lines a producer may not send (`LinesRefused`, by producer and reason). */
  refused(producer: string, reason: "channel" | "changes", value: number): void;
  publish(): void;
}

/**
 * What each producer queue may carry, by queue ARN: who sent a record is the queue it came
 * through (SQS sets `eventSourceARN`, the sender cannot), and only the producer's role may send
 * to its queue. Undefined: every queue is trusted (a deployment before producer grants, a test).
 */
export type Grants = ReadonlyMap<string, ProducerGrant>;

/**
 * The ingestion Lambda's logic: a direct batch (at most `maxBatch` messages, else nothing is
 * written) gets a per-message report; an SQS batch (one chat
 * message per record body) reports the records to retry. Invalid records are reported too, so
 * that after the queue's retries they land in its dead-letter queue instead of vanishing, while
 * the valid records of the batch are stored. A message in conflict with the stored one (a reused
 * id) is logged and not retried: the stored version stands; edits and deletions are their own
 * lines (`op`), counted in the log line and the metrics by what they did.
 */
export function createIngestHandler(
  ingest: Ingest,
  logger: Logger,
  maxBatch: number,
  metrics: IngestMetrics,
  grants?: Grants,
) {
  return async (event: IngestEvent): Promise<IngestResponse> => {
    try {
      return await handle(ingest, logger, maxBatch, metrics, event, grants);
    } finally {
      metrics.publish();
    }
  };
}

async function handle(
  ingest: Ingest,
  logger: Logger,
  maxBatch: number,
  metrics: IngestMetrics,
  event: IngestEvent,
  grants: Grants | undefined,
): Promise<IngestResponse> {
  const kind = eventKind(event);
  if (kind === "sqs") {
    return ingestQueues(ingest, logger, metrics, (event as SQSEvent).Records, grants);
  }
  // Only an operator may invoke the function directly: no grant limits them.
  const { messages } = event as DirectIngestEvent;
  if (messages.length > maxBatch) {
    throw new RangeError(
      `ingest: a direct batch of ${messages.length} messages is over MAX_BATCH (${maxBatch}): send at most ${maxBatch} per invocation, or use the ingest queue`,
    );
  }
  const result = await ingest(messages);
  logResult(logger, metrics, result, messages.length);
  return result;
}

/**
 * Which kind of event this is; throws a TypeError saying what is wrong with one that is neither
 * (both kinds at once, a record that is not an SQS record), rather than guess.
 */
function eventKind(event: unknown): "sqs" | "direct" {
  if (typeof event !== "object" || event === null || Array.isArray(event)) {
    throw new TypeError('ingest: expected {"messages": [...]} or an SQS event');
  }
  const { Records: records, messages } = event as Record<string, unknown>;
  if (records !== undefined && messages !== undefined) {
    throw new TypeError("ingest: an event carries Records (SQS) or messages (direct), not both");
  }
  if (Array.isArray(messages)) return "direct";
  if (!Array.isArray(records)) {
    throw new TypeError('ingest: expected {"messages": [...]} or an SQS event');
  }
  records.forEach((record, index) => {
    const r = record as Partial<SQSRecord> | null;
    if (typeof r?.messageId !== "string" || typeof r?.body !== "string") {
      throw new TypeError(
        `ingest: Records[${index}] is not an SQS record (expected messageId and body strings)`,
      );
    }
  });
  return "sqs";
}

/**
 * An SQS batch, by the queue each record came through (one event source, one queue, in practice):
 * a queue no grant names fails its records, so that they wait in its dead-letter queue.
 */
async function ingestQueues(
  ingest: Ingest,
  logger: Logger,
  metrics: IngestMetrics,
  records: SQSRecord[],
  grants: Grants | undefined,
): Promise<SQSBatchResponse> {
  const byQueue = new Map<string, SQSRecord[]>();
  for (const record of records) {
    const queue = grants === undefined ? "" : String(record.eventSourceARN);
    const list = byQueue.get(queue) ?? [];
    list.push(record);
    byQueue.set(queue, list);
  }
  const batchItemFailures: SQSBatchResponse["batchItemFailures"] = [];
  for (const [queue, list] of byQueue) {
    const grant = grants?.get(queue);
    if (grants !== undefined && grant === undefined) {
      logger.error("records from a queue no producer grant names; left for its dead-letter queue", {
        queue,
        records: list.length,
      });
      batchItemFailures.push(...list.map((r) => ({ itemIdentifier: r.messageId })));
      continue;
    }
    const response = await ingestRecords(ingest, logger, metrics, list, grant);
    batchItemFailures.push(...response.batchItemFailures);
  }
  return { batchItemFailures };
}

async function ingestRecords(
  ingest: Ingest,
  logger: Logger,
  metrics: IngestMetrics,
  records: SQSRecord[],
  grant: ProducerGrant | undefined,
): Promise<SQSBatchResponse> {
  const bodies: unknown[] = [];
  const failures = new Set<string>();
  const recordOf: string[] = [];
  for (const record of records) {
    try {
      bodies.push(JSON.parse(record.body));
      recordOf.push(record.messageId);
    } catch {
      logger.error("record body is not JSON", { recordId: record.messageId });
      failures.add(record.messageId);
    }
  }
  const result = await ingest(bodies, grant);
  logResult(logger, metrics, result, bodies.length, recordOf);
  if (grant !== undefined) logRefusals(logger, metrics, grant, result, records, recordOf);
  for (const { index } of [...result.rejected, ...result.failed, ...result.refused]) {
    failures.add(recordOf[index]);
  }
  return { batchItemFailures: [...failures].map((itemIdentifier) => ({ itemIdentifier })) };
}

/**
 * One line per batch for what its producer may not send, never a line's channel or text: the
 * records wait in the producer's dead-letter queue (its alarm tells), to be redriven once the
 * grant is right. Counted on their first receive only, as the retries would count them again.
 */
function logRefusals(
  logger: Logger,
  metrics: IngestMetrics,
  grant: ProducerGrant,
  result: IngestResult,
  records: SQSRecord[],
  recordOf: string[],
): void {
  if (result.refused.length === 0) return;
  const counts = { channel: 0, changes: 0 };
  const firstReceive = new Set(
    records.filter((r) => r.attributes?.ApproximateReceiveCount === "1").map((r) => r.messageId),
  );
  const firstCounts = { channel: 0, changes: 0 };
  for (const { index, reason } of result.refused) {
    counts[reason]++;
    if (firstReceive.has(recordOf[index])) firstCounts[reason]++;
  }
  logger.warn("lines refused: outside the producer's grant; left for its dead-letter queue", {
    producer: grant.name,
    outsideChannels: counts.channel,
    changesWithoutRight: counts.changes,
  });
  for (const reason of ["channel", "changes"] as const) {
    if (firstCounts[reason] > 0) metrics.refused(grant.name, reason, firstCounts[reason]);
  }
}

/**
 * One structured line per batch, with the counts of what changes did, and one per input not
 * applied as sent; never message text. The change counts go to the metrics too.
 */
function logResult(
  logger: Logger,
  metrics: IngestMetrics,
  result: IngestResult,
  received: number,
  recordOf?: string[],
): void {
  const recordId = (index: number) => (recordOf ? { recordId: recordOf[index] } : {});
  const counts = changeCounts(result);
  logger.info("ingested", {
    received,
    stored: result.stored.length,
    unchanged: result.unchanged.length,
    conflicts: result.conflicts.length,
    deleted: result.deleted.length,
    rejected: result.rejected.length,
    refused: result.refused.length,
    failed: result.failed.length,
    ...counts,
  });
  for (const [op, byStatus] of Object.entries(counts)) {
    for (const [status, count] of Object.entries(byStatus)) {
      if (count > 0) metrics.add(metricName(op as keyof typeof counts, status), count);
    }
  }
  if (result.deleted.length > 0) metrics.add("DeletedMessagesRefused", result.deleted.length);
  for (const change of result.changes) {
    if (change.status !== "stale" && change.status !== "missing") continue;
    logger.warn(
      change.status === "stale"
        ? "edit older than the stored version; the stored version is kept"
        : change.op === "edit"
          ? "edit of a message not stored; held for CHANGE_HOLD_HOURS, applied if the message arrives meanwhile"
          : "deletion of a message not stored; held for CHANGE_HOLD_HOURS, the message is refused if it arrives meanwhile",
      { ...change, ...recordId(change.index) },
    );
  }
  for (const conflict of result.conflicts) {
    logger.warn("message conflicts with the stored one; the stored version is kept", {
      ...conflict,
      ...recordId(conflict.index),
    });
  }
  for (const rejection of result.rejected) {
    logger.warn("message rejected", { ...rejection, ...recordId(rejection.index) });
  }
  for (const failure of result.failed) {
    logger.error("message not stored", { ...failure, ...recordId(failure.index) });
  }
}

const STATUSES = ["applied", "unchanged", "stale", "missing"] as const;

/** How many edits and deletions were applied, unchanged, stale and missing. */
function changeCounts(result: IngestResult) {
  const zero = () =>
    Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<(typeof STATUSES)[number], number>;
  const counts = { edits: zero(), deletions: zero() };
  for (const { op, status } of result.changes) {
    counts[op === "edit" ? "edits" : "deletions"][status]++;
  }
  return counts;
}

const metricName = (op: "edits" | "deletions", status: string): ChangeMetric =>
  `${op === "edits" ? "Edits" : "Deletions"}${status[0].toUpperCase()}${status.slice(1)}` as ChangeMetric;
