import {
  BatchProcessor,
  EventType,
  processPartialResponse,
  SqsFifoPartialProcessorAsync,
} from "@aws-lambda-powertools/batch";
import { ChangeMessageVisibilityBatchCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { ExtractionError, InvalidModelOutputError, LLMError } from "../extraction/index.js";
import {
  parseSegmentBody,
  readSegmentMessages,
  type SegmentMessageSource,
} from "../pipeline/contract/index.js";
import { KnowledgeError, SegmentBusyError } from "./errors.js";
import type { ExtractionOutcome, SegmentExtractor } from "./extract-segment.js";

/** The metrics the consumer reports (EMF in the Lambda function; see docs/extraction.md). */
export type ExtractionMetricName =
  | "SegmentsExtracted"
  | "SegmentsAlreadyExtracted"
  | "ResultsReplaced"
  | "LLMCalls"
  | "InputTokens"
  | "OutputTokens"
  | "CacheReadTokens"
  | "CacheWriteTokens"
  | "InvalidModelOutputs"
  | "RepairRetries"
  | "CandidatesPerSegment"
  | "WindowLatency"
  | "WindowsReused"
  | "ExtractionFailures";

export interface ExtractionMetrics {
  add(name: ExtractionMetricName, value: number): void;
}

/** Structured logs: ids and counts only, never message text. */
export interface ExtractionLogger {
  info(message: string, attributes: Record<string, unknown>): void;
  warn(message: string, attributes: Record<string, unknown>): void;
  error(message: string, attributes: Record<string, unknown>): void;
}

export interface SegmentConsumerDependencies {
  /** What extracts and stores a segment: a {@link SegmentExtractor}, or something around one. */
  extractor: Pick<SegmentExtractor, "extract">;
  /** Where reference-form segments' messages are read (the messages table). */
  messages: SegmentMessageSource;
  /** The only table a reference-form segment may name. */
  messagesTable: string;
  metrics: ExtractionMetrics;
  logger: ExtractionLogger;
  /**
   * With it, a failed record's visibility timeout is shortened to {@link retryDelaySeconds}, so
   * that throttling or an outage is retried after a backoff rather than after the queue's whole
   * visibility timeout (sized for the longest extraction). Default: none, SQS's own timing.
   */
  sqs?: SQSClient;
}

/**
 * The message attribute (String `"true"`) that asks for a segment to be extracted again even
 * though its result is current: what `npm start -- reextract` sends.
 */
export const REEXTRACT_ATTRIBUTE = "convoseg-reextract";

/** The longest backoff before a failed segment is tried again. */
const MAX_RETRY_DELAY_SECONDS = 15 * 60;

/**
 * Seconds before a record that failed on its `receiveCount`-th receive is tried again: 30 s
 * doubling per receive up to 15 minutes, or, when another delivery holds the segment's lease,
 * until that lease ends.
 */
export function retryDelaySeconds(error: unknown, receiveCount: number, now: number): number {
  if (error instanceof SegmentBusyError) {
    return Math.min(
      MAX_RETRY_DELAY_SECONDS,
      Math.max(1, Math.ceil((error.leaseExpiresAt - now) / 1000)),
    );
  }
  return Math.min(MAX_RETRY_DELAY_SECONDS, 30 * 2 ** Math.max(0, receiveCount - 1));
}

/**
 * Extracts one segment message body: parses it (v1), reads its messages (inline or from the
 * messages table), extracts and stores the result exactly once (again with `force`). Throws on every failure, so that
 * the record is retried (and after the queue's receive limit, dead-lettered): nothing is
 * acknowledged without a stored result.
 */
async function consumeSegment(
  body: string,
  deps: SegmentConsumerDependencies,
  options: { signal?: AbortSignal; force?: boolean } = {},
): Promise<ExtractionOutcome> {
  let ids: { channel?: string; segmentId?: string } = {};
  let outcome: ExtractionOutcome;
  try {
    const segment = parseSegmentBody(body);
    ids = { channel: segment.channel, segmentId: segment.segmentId };
    if (segment.reference !== undefined && segment.reference.table !== deps.messagesTable) {
      throw new KnowledgeError(
        "KNOWLEDGE_FOREIGN_TABLE",
        `segment ${segment.segmentId}: reference.table ${JSON.stringify(segment.reference.table)} is not this deployment's messages table (${deps.messagesTable})`,
      );
    }
    const messages = await readSegmentMessages(segment, deps.messages);
    outcome = await deps.extractor.extract(segment, messages, {
      ...options,
      // Counted as they happen, so that the calls of failed attempts are in the metrics too.
      onUsage: (usage, call) => {
        deps.metrics.add("LLMCalls", 1);
        deps.metrics.add("InputTokens", usage.inputTokens);
        deps.metrics.add("OutputTokens", usage.outputTokens);
        deps.metrics.add("CacheReadTokens", usage.cacheReadTokens);
        deps.metrics.add("CacheWriteTokens", usage.cacheWriteTokens);
        deps.metrics.add("WindowLatency", call.latencyMs);
      },
      onRepair: () => deps.metrics.add("RepairRetries", 1),
    });
  } catch (error) {
    deps.metrics.add("ExtractionFailures", 1);
    if (error instanceof InvalidModelOutputError) deps.metrics.add("InvalidModelOutputs", 1);
    deps.logger.warn("segment not extracted; the record will be retried", {
      ...ids,
      error: describe(error),
    });
    throw error;
  }
  report(outcome, deps);
  deps.logger.info(outcomeMessage(outcome), {
    ...ids,
    status: outcome.status,
    late: outcome.result.late,
    messages: outcome.result.count,
    candidates: outcome.result.candidates.length,
    calls: outcome.attempt.calls,
    reusedWindows: outcome.reusedWindows,
    model: outcome.result.model,
    promptVersion: outcome.result.promptVersion,
    ...(outcome.result.replaced ? { replaced: outcome.result.replaced } : {}),
  });
  return outcome;
}

/**
 * The SQS event handler: each record through {@link consumeSegment}, failures reported as
 * partial batch failures. On a FIFO queue a failed record fails the rest of its message group
 * (their order is kept) while other groups go on.
 */
export function segmentConsumer(
  deps: SegmentConsumerDependencies,
): (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse> {
  return async (event, context) => {
    const errors = new Map<string, unknown>();
    const handle = async (record: SQSRecord) => {
      try {
        await consumeSegment(record.body, deps, {
          force: record.messageAttributes?.[REEXTRACT_ATTRIBUTE]?.stringValue === "true",
        });
      } catch (error) {
        errors.set(record.messageId, error);
        throw error;
      }
    };
    const fifo = event.Records[0]?.eventSourceARN?.endsWith(".fifo") ?? false;
    // A batch where every record failed is answered like any other: all listed as failures.
    const response = fifo
      ? await processPartialResponse(event, handle, new SqsFifoPartialProcessorAsync(), {
          context,
          skipGroupOnError: true,
          throwOnFullBatchFailure: false,
        })
      : await processPartialResponse(event, handle, new BatchProcessor(EventType.SQS), {
          context,
          throwOnFullBatchFailure: false,
        });
    if (deps.sqs !== undefined) await backOff(deps.sqs, event, response, errors, deps.logger);
    return response;
  };
}

/**
 * Shortens the visibility timeout of each failed record to its retry delay. A record skipped
 * after an earlier failure of its FIFO group gets the group's first delay. Best effort: if it
 * fails, SQS retries after the queue's own visibility timeout.
 */
async function backOff(
  sqs: SQSClient,
  event: SQSEvent,
  response: SQSBatchResponse,
  errors: Map<string, unknown>,
  logger: ExtractionLogger,
): Promise<void> {
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  const records = event.Records.filter((r) => failed.has(r.messageId));
  const first = records.find((r) => errors.has(r.messageId));
  const now = Date.now();
  const byQueue = new Map<
    string,
    { Id: string; ReceiptHandle: string; VisibilityTimeout: number }[]
  >();
  records.forEach((record, i) => {
    const error = errors.get(record.messageId) ?? (first && errors.get(first.messageId));
    const entries = byQueue.get(record.eventSourceARN) ?? [];
    entries.push({
      Id: String(i),
      ReceiptHandle: record.receiptHandle,
      VisibilityTimeout: retryDelaySeconds(
        error,
        Number(record.attributes.ApproximateReceiveCount),
        now,
      ),
    });
    byQueue.set(record.eventSourceARN, entries);
  });
  for (const [arn, entries] of byQueue) {
    for (let i = 0; i < entries.length; i += 10) {
      try {
        await sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: queueUrlOf(arn),
            Entries: entries.slice(i, i + 10),
          }),
        );
      } catch (error) {
        logger.warn("could not shorten the retry delay of failed segments", {
          queue: arn,
          error: describe(error),
        });
      }
    }
  }
}

/** The URL of the queue an event source ARN names (`arn:aws:sqs:<region>:<account>:<name>`). */
export function queueUrlOf(arn: string): string {
  const [, partition, , region, account, name] = arn.split(":");
  const domain = partition === "aws-cn" ? "amazonaws.com.cn" : "amazonaws.com";
  return `https://sqs.${region}.${domain}/${account}/${name}`;
}

function report(outcome: ExtractionOutcome, deps: SegmentConsumerDependencies): void {
  const { metrics } = deps;
  if (outcome.status === "already-extracted") {
    metrics.add("SegmentsAlreadyExtracted", 1);
    return;
  }
  metrics.add("SegmentsExtracted", 1);
  if (outcome.status === "replaced") metrics.add("ResultsReplaced", 1);
  metrics.add("WindowsReused", outcome.reusedWindows);
  metrics.add("CandidatesPerSegment", outcome.result.candidates.length);
}

function outcomeMessage(outcome: ExtractionOutcome): string {
  if (outcome.status === "already-extracted") return "segment already extracted; acknowledged";
  if (outcome.status === "replaced") {
    const { model, promptVersion } = outcome.result.replaced ?? { model: "?", promptVersion: "?" };
    return `segment re-extracted: replaced the result of ${model} / prompt ${promptVersion}`;
  }
  return "segment extracted";
}

/** An error for logs: its name, code and message (which never quote message text). */
function describe(error: unknown): Record<string, unknown> {
  if (error instanceof LLMError) {
    const { name, code, retryable, status, kind } = error;
    return { name, code, kind, retryable, status };
  }
  if (error instanceof InvalidModelOutputError) {
    // The reason says what was wrong; the raw reply may quote the chat, so it stays out.
    return { name: error.name, code: error.code, reason: error.reason };
  }
  if (error instanceof ExtractionError || error instanceof KnowledgeError) {
    return { name: error.name, code: error.code, message: error.message };
  }
  const { name, message } = error as Error;
  return { name, message };
}
