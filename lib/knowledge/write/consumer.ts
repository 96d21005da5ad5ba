import {
  BatchProcessor,
  EventType,
  processPartialResponse,
  SqsFifoPartialProcessorAsync,
} from "@aws-lambda-powertools/batch";
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { isRefusedAsInvalid } from "../../base/dynamodb/index.js";
import {
  type InlineMessage,
  InvalidSegmentMessageError,
  parseSegmentBody,
  readSegmentMessages,
  readThreadRoot,
  type SegmentMessageSource,
} from "../../segmentation/pipeline/contract/index.js";
import { BudgetPausedError, CircuitOpenError, DeadlineError, KnowledgeError } from "../errors.js";
import { InvalidModelOutputError, isPermanentFailure } from "../extraction/index.js";
import type { SegmentResult } from "../store/index.js";
import type { AttemptLedger } from "../store/ledger.js";
import { type CurrentMessages, extractCurrent } from "../store/message-states.js";
import {
  type ExtractionLogger,
  type ExtractionMetrics,
  outcomeMessage,
  reportOutcome,
} from "./consumer-report.js";
import type { ExtractionOutcome, SegmentExtractor } from "./extract-segment.js";
import { backOff, deadLetter, describe } from "./redelivery.js";
import {
  DEFAULT_RETRY,
  INVALID_OUTPUT_ATTEMPTS,
  isAuthFailure,
  isWait,
  type RetrySchedule,
  retryDelaySeconds,
} from "./retry.js";

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
  /**
   * The consumer's own count of each segment's failed attempts, which waits (a budget pause, a
   * busy segment, the breaker open) and records skipped behind their FIFO group do not use up.
   * Default: none, SQS's receive count stands for it.
   */
  attempts?: AttemptLedger;
  /**
   * With `sqs`, where a segment goes once `retry.maxAttempts` attempts failed: the consumer
   * moves it there itself (the queue's `maxReceiveCount` is a last resort only). Default: none,
   * the record keeps failing until the queue's redrive policy moves it.
   */
  deadLetterQueueUrl?: string;
  /** The backoff and the attempt budget (default {@link DEFAULT_RETRY}). */
  retry?: RetrySchedule;
  /**
   * Time kept back from the function's remaining time (Lambda's context): model calls still
   * running then are aborted, so that a record fails cleanly (its lease released, its retry
   * delay set) instead of in a timeout. Default 10 s.
   */
  deadlineMarginMs?: number;
  /** The clock retry delays are reckoned by (default the wall clock). */
  now?: () => number;
  /** Extract the message store's current messages, redacting what changes meanwhile (default: none). */
  current?: CurrentMessages;
  /**
   * Told each segment's result once stored or found stored, with the messages it was extracted
   * from (absent: read them from the store, they changed meanwhile): the search index's writer.
   * A failure fails the record, which is retried and finds the result stored (default: none).
   */
  indexed?: (result: SegmentResult, messages?: readonly InlineMessage[]) => Promise<void>;
}

/**
 * The message attribute (String `"true"`) that asks for a segment to be extracted again even
 * though its result is current: what `npm start -- reextract` sends.
 */
export const REEXTRACT_ATTRIBUTE = "convoseg-reextract";

/**
 * With {@link REEXTRACT_ATTRIBUTE}, the `extractedAt` of the result to replace (what a
 * redaction's request sends): the segment is extracted again only while that result is stored,
 * so a request delivered twice re-extracts once.
 */
export const REEXTRACT_REPLACING_ATTRIBUTE = "convoseg-reextract-replacing";

const DEFAULT_DEADLINE_MARGIN_MS = 10_000;

/**
 * Extracts one segment message body: parses it (v1), reads its messages (inline or from the
 * messages table), extracts and stores the result exactly once (again with `force`). Throws on
 * every failure, so that the record is retried: nothing is acknowledged without a stored result.
 * `ids` is told the segment's channel and id once the body is read.
 */
async function consumeSegment(
  body: string,
  deps: SegmentConsumerDependencies,
  options: { signal?: AbortSignal; force?: boolean; replacing?: string },
  ids: { channel?: string; segmentId?: string },
): Promise<void> {
  const segment = parseSegmentBody(body);
  ids.channel = segment.channel;
  ids.segmentId = segment.segmentId;
  if (options.signal?.aborted) throw new DeadlineError(segment.segmentId);
  if (segment.reference !== undefined && segment.reference.table !== deps.messagesTable) {
    throw new KnowledgeError(
      "KNOWLEDGE_FOREIGN_TABLE",
      `segment ${segment.segmentId}: reference.table ${JSON.stringify(segment.reference.table)} is not this deployment's messages table (${deps.messagesTable})`,
    );
  }
  const messages = await readSegmentMessages(segment, deps.messages);
  // A thread's root is context for its replies: read now, like the messages, when not inline.
  const threadRoot = await readThreadRoot(segment, deps.messages);
  if (threadRoot !== undefined) segment.threadRoot = threadRoot;
  const extract = (
    envelope: typeof segment,
    kept: readonly (typeof messages)[number][],
    edits?: Record<string, number>,
  ) =>
    deps.extractor.extract(envelope, kept, {
      ...options,
      edits,
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
  let outcome: ExtractionOutcome;
  let extracted: readonly InlineMessage[] | undefined = messages;
  if (deps.current === undefined) {
    outcome = await extract(segment, messages);
  } else {
    const done = await extractCurrent(segment, messages, deps.current, (envelope, kept, edits) => {
      extracted = kept;
      return extract({ ...segment, ...envelope }, kept, edits);
    });
    if (done === undefined) {
      deps.metrics.add("SegmentsAllDeleted", 1);
      deps.logger.info("every message of the segment was deleted: nothing to extract", ids);
      return;
    }
    outcome = done.outcome;
    deps.metrics.add("ChangesAfterExtraction", done.changes);
    if (done.changes > 0) extracted = undefined;
  }
  await deps.indexed?.(outcome.result, extracted);
  reportOutcome(outcome, deps.metrics);
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
    // Counts of what the bounds cut, never what was cut.
    ...(outcome.result.trimmed && outcome.status !== "already-extracted"
      ? { trimmed: outcome.result.trimmed }
      : {}),
  });
}

/**
 * The SQS event handler: each record through {@link consumeSegment}, failures reported as
 * partial batch failures with their retry delays. On a FIFO queue a failed record fails the rest
 * of its message group (their order is kept) while other groups go on. Model calls are aborted
 * at the function's remaining time less a margin; a segment whose attempts are used up is moved
 * to the dead-letter queue and acknowledged.
 */
export function segmentConsumer(
  deps: SegmentConsumerDependencies,
): (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse> {
  return async (event, context) => {
    checkEvent(event);
    const delays = new Map<string, number>();
    const deadline = deadlineOf(context, deps.deadlineMarginMs ?? DEFAULT_DEADLINE_MARGIN_MS);
    const handle = async (record: SQSRecord) => {
      const ids: { channel?: string; segmentId?: string } = {};
      try {
        await consumeSegment(
          record.body,
          deps,
          {
            force: record.messageAttributes?.[REEXTRACT_ATTRIBUTE]?.stringValue === "true",
            replacing: record.messageAttributes?.[REEXTRACT_REPLACING_ATTRIBUTE]?.stringValue,
            signal: deadline.signal,
          },
          ids,
        );
      } catch (error) {
        const delay = await failed(record, error, ids, deps, deadline.signal?.aborted ?? false);
        if (delay === undefined) return;
        delays.set(record.messageId, delay);
        throw error;
      }
    };
    const fifo = event.Records[0]?.eventSourceARN?.endsWith(".fifo") ?? false;
    try {
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
      if (deps.sqs !== undefined) {
        await backOff(deps.sqs, event, response, delays, deps.retry ?? DEFAULT_RETRY, deps.logger);
      }
      return response;
    } finally {
      deadline.dispose();
    }
  };
}

/**
 * Throws a {@link KnowledgeError} naming what is wrong with an event that is not an SQS batch
 * (`{}`, `null`, a record that is not an SQS record), rather than fail on it with a TypeError.
 */
function checkEvent(event: unknown): asserts event is SQSEvent {
  const records = (event as { Records?: unknown } | null)?.Records;
  const invalid = (what: string) =>
    new KnowledgeError(
      "KNOWLEDGE_INVALID_EVENT",
      `extract: ${what}: this function takes the segment queue's SQS events (invoke it through its event source mapping)`,
    );
  if (typeof event !== "object" || event === null || !Array.isArray(records)) {
    throw invalid(`expected an SQS event, {"Records": [...]} (got ${describeValue(event)})`);
  }
  records.forEach((record: Partial<SQSRecord> | null, index) => {
    if (typeof record?.messageId !== "string" || typeof record?.body !== "string") {
      throw invalid(`Records[${index}] is not an SQS record (expected messageId and body strings)`);
    }
  });
}

/** What a value is, for an error message: never its content. */
function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object without Records";
  return typeof value;
}

/** An abort signal at the invocation's remaining time less `marginMs` (none without a context). */
function deadlineOf(
  context: Context | undefined,
  marginMs: number,
): { signal?: AbortSignal; dispose: () => void } {
  const remaining = context?.getRemainingTimeInMillis?.();
  if (remaining === undefined) return { dispose: () => {} };
  const controller = new AbortController();
  const abort = () =>
    controller.abort(
      new KnowledgeError(
        "KNOWLEDGE_DEADLINE_ABORTED",
        `the function's remaining time less ${marginMs} ms ran out during extraction`,
      ),
    );
  // Already past: no record starts.
  if (remaining <= marginMs) abort();
  const timer = setTimeout(abort, Math.max(0, remaining - marginMs));
  return { signal: controller.signal, dispose: () => clearTimeout(timer) };
}

/**
 * What becomes of a failed record: a wait (not an attempt), or a failed attempt counted, and,
 * once the attempts are used up, the segment dead-lettered by the consumer. Resolves to the
 * record's retry delay in seconds, or undefined when it was dead-lettered (and is acknowledged).
 */
async function failed(
  record: SQSRecord,
  error: unknown,
  ids: { channel?: string; segmentId?: string },
  deps: SegmentConsumerDependencies,
  deadline: boolean,
): Promise<number | undefined> {
  const retry = deps.retry ?? DEFAULT_RETRY;
  const now = (deps.now ?? Date.now)();
  const { metrics, logger } = deps;
  if (isWait(error)) {
    metrics.add(
      error instanceof BudgetPausedError
        ? "BudgetPauses"
        : error instanceof CircuitOpenError
          ? "CircuitOpen"
          : "SegmentWaits",
      1,
    );
    const delay = retryDelaySeconds(error, 0, now, retry);
    logger.info("segment waits; not an attempt", { ...ids, error: describe(error), delay });
    return delay;
  }
  metrics.add("ExtractionFailures", 1);
  if (error instanceof InvalidModelOutputError) metrics.add("InvalidModelOutputs", 1);
  if (isAuthFailure(error)) metrics.add("AuthFailures", 1);
  // A refused request or a body that is no segment cannot succeed on a retry.
  const permanent =
    isPermanentFailure(error) ||
    error instanceof InvalidSegmentMessageError ||
    isRefusedAsInvalid(error);
  if (permanent) metrics.add("PermanentFailures", 1);
  const attempts = await countAttempt(record, ids, deps);
  const allowed =
    error instanceof InvalidModelOutputError
      ? Math.min(retry.maxAttempts, INVALID_OUTPUT_ATTEMPTS)
      : retry.maxAttempts;
  const delay = permanent ? retry.maxDelaySeconds : retryDelaySeconds(error, attempts, now, retry);
  const attributes = {
    ...ids,
    error: describe(error),
    attempt: attempts,
    maxAttempts: allowed,
    ...(deadline ? { deadline: true } : {}),
    ...(permanent ? { permanent: true } : {}),
  };
  if ((attempts < allowed && !permanent) || deps.sqs === undefined || !deps.deadLetterQueueUrl) {
    const message = isAuthFailure(error)
      ? "the model provider refused the credentials or the access (401/403); the segment waits the longest delay: fix the key or the permission"
      : permanent
        ? `segment cannot be extracted (${permanentCause(error)}); no dead-letter queue to move it to, so it waits the longest delay`
        : "segment not extracted; the record will be retried";
    (isAuthFailure(error) || permanent ? logger.error : logger.warn)(message, {
      ...attributes,
      delay,
    });
    return delay;
  }
  try {
    await deadLetter(deps.sqs, deps.deadLetterQueueUrl, record, error, attempts);
  } catch (sendError) {
    logger.error("could not move a given-up segment to the dead-letter queue; it is retried", {
      ...attributes,
      sendError: describe(sendError),
    });
    return retry.maxDelaySeconds;
  }
  metrics.add("SegmentsDeadLettered", 1);
  logger.error(
    permanent
      ? `gave up on segment at once (${permanentCause(error)}; a retry cannot succeed): moved to the dead-letter queue`
      : `gave up on segment after ${attempts} failed attempts: moved to the dead-letter queue`,
    attributes,
  );
  if (deps.attempts && ids.channel !== undefined && ids.segmentId !== undefined) {
    // A redrive starts counting again.
    await deps.attempts.clearAttempts(ids.channel, ids.segmentId).catch(() => {});
  }
  return undefined;
}

/** Why a permanent failure cannot succeed, for a log line: never the model's reply. */
function permanentCause(error: unknown): string {
  if (error instanceof InvalidSegmentMessageError) {
    return `the queued body is not a valid segment message: ${error.field}: ${error.reason}`;
  }
  if (isRefusedAsInvalid(error)) {
    return `a table refused a write as invalid (${(error as Error).message})`;
  }
  const status = (error as { status?: number }).status;
  return `the model provider refused the request (${status})`;
}

/** The segment's failed attempts so far, this one included: the ledger's, else SQS's receives. */
async function countAttempt(
  record: SQSRecord,
  ids: { channel?: string; segmentId?: string },
  deps: SegmentConsumerDependencies,
): Promise<number> {
  const receives = Number(record.attributes.ApproximateReceiveCount) || 1;
  if (deps.attempts === undefined || ids.channel === undefined || ids.segmentId === undefined) {
    return receives;
  }
  try {
    return await deps.attempts.countAttempt(ids.channel, ids.segmentId);
  } catch (error) {
    deps.logger.warn("could not count the failed attempt; the receive count stands for it", {
      ...ids,
      error: describe(error),
    });
    return receives;
  }
}
