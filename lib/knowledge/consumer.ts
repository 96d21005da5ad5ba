import {
  BatchProcessor,
  EventType,
  processPartialResponse,
  SqsFifoPartialProcessorAsync,
} from "@aws-lambda-powertools/batch";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { ExtractionError, InvalidModelOutputError, LLMError } from "../extraction/index.js";
import {
  parseSegmentBody,
  readSegmentMessages,
  type SegmentMessageSource,
} from "../pipeline/index.js";
import { KnowledgeError } from "./errors.js";
import type { ExtractionOutcome, SegmentExtractor } from "./extract-segment.js";

/** The metrics the consumer reports (EMF in the Lambda function; see the README). */
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
  extractor: SegmentExtractor;
  /** Where reference-form segments' messages are read (the messages table). */
  messages: SegmentMessageSource;
  /** The only table a reference-form segment may name. */
  messagesTable: string;
  metrics: ExtractionMetrics;
  logger: ExtractionLogger;
}

/**
 * Extracts one segment message body: parses it (v1), reads its messages (inline or from the
 * messages table), extracts and stores the result exactly once. Throws on every failure, so that
 * the record is retried (and after the queue's receive limit, dead-lettered): nothing is
 * acknowledged without a stored result.
 */
export async function consumeSegment(
  body: string,
  deps: SegmentConsumerDependencies,
  options: { signal?: AbortSignal } = {},
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
    outcome = await deps.extractor.extract(segment, messages, options);
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
  const handle = async (record: SQSRecord) => {
    await consumeSegment(record.body, deps);
  };
  return async (event, context) => {
    const fifo = event.Records[0]?.eventSourceARN?.endsWith(".fifo") ?? false;
    // A batch where every record failed is answered like any other: all listed as failures.
    if (fifo) {
      return processPartialResponse(event, handle, new SqsFifoPartialProcessorAsync(), {
        context,
        skipGroupOnError: true,
        throwOnFullBatchFailure: false,
      });
    }
    return processPartialResponse(event, handle, new BatchProcessor(EventType.SQS), {
      context,
      throwOnFullBatchFailure: false,
    });
  };
}

function report(outcome: ExtractionOutcome, deps: SegmentConsumerDependencies): void {
  const { metrics } = deps;
  if (outcome.status === "already-extracted") {
    metrics.add("SegmentsAlreadyExtracted", 1);
    return;
  }
  metrics.add("SegmentsExtracted", 1);
  if (outcome.status === "replaced") metrics.add("ResultsReplaced", 1);
  metrics.add("LLMCalls", outcome.attempt.calls);
  metrics.add("InputTokens", outcome.attempt.inputTokens);
  metrics.add("OutputTokens", outcome.attempt.outputTokens);
  metrics.add("CacheReadTokens", outcome.attempt.cacheReadTokens);
  metrics.add("CacheWriteTokens", outcome.attempt.cacheWriteTokens);
  metrics.add("RepairRetries", outcome.repairs);
  metrics.add("WindowsReused", outcome.reusedWindows);
  metrics.add("CandidatesPerSegment", outcome.result.candidates.length);
  for (const latency of outcome.latenciesMs) metrics.add("WindowLatency", latency);
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
    return { name: error.name, code: error.code, retryable: error.retryable, status: error.status };
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
