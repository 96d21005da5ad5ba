import type { Logger } from "@aws-lambda-powertools/logger";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import type { Writer } from "../../lib/history/store.js";
import { type IngestOptions, type IngestResult, ingest } from "../../lib/ingest/index.js";

/** Direct invocation: a batch of chat messages in the JSON-lines input format. */
export interface DirectIngestEvent {
  messages: unknown[];
}

export type IngestEvent = DirectIngestEvent | SQSEvent;
export type IngestResponse = IngestResult | SQSBatchResponse;

const isSqsEvent = (event: unknown): event is SQSEvent =>
  Array.isArray((event as SQSEvent)?.Records);

/**
 * The ingestion Lambda's logic: a direct batch gets a per-message report; an SQS batch (one chat
 * message per record body) reports the records to retry. Invalid records are reported too, so
 * that after the queue's retries they land in its dead-letter queue instead of vanishing.
 */
export function createIngestHandler(writer: Writer, logger: Logger, options: IngestOptions = {}) {
  return async (event: IngestEvent): Promise<IngestResponse> => {
    if (isSqsEvent(event)) return ingestRecords(writer, logger, event, options);
    if (!Array.isArray((event as DirectIngestEvent)?.messages)) {
      throw new TypeError('ingest: expected {"messages": [...]} or an SQS event');
    }
    const result = await ingest(writer, event.messages, options);
    logResult(logger, result, event.messages.length);
    return result;
  };
}

async function ingestRecords(
  writer: Writer,
  logger: Logger,
  event: SQSEvent,
  options: IngestOptions,
): Promise<SQSBatchResponse> {
  const bodies: unknown[] = [];
  const failures = new Set<string>();
  const recordOf: string[] = [];
  for (const record of event.Records) {
    try {
      bodies.push(JSON.parse(record.body));
      recordOf.push(record.messageId);
    } catch {
      logger.error("record body is not JSON", { recordId: record.messageId });
      failures.add(record.messageId);
    }
  }
  const result = await ingest(writer, bodies, options);
  logResult(logger, result, bodies.length);
  for (const { index } of [...result.rejected, ...result.failed]) failures.add(recordOf[index]);
  return { batchItemFailures: [...failures].map((itemIdentifier) => ({ itemIdentifier })) };
}

/** One structured line per batch, and one per message that was not stored; never message text. */
function logResult(logger: Logger, result: IngestResult, received: number): void {
  logger.info("ingested", {
    received,
    stored: result.stored.length,
    rejected: result.rejected.length,
    failed: result.failed.length,
  });
  for (const rejection of result.rejected) logger.warn("message rejected", { ...rejection });
  for (const failure of result.failed) logger.error("message not stored", { ...failure });
}
