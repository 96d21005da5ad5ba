/**
 * Knowledge: what extraction learns from closed segments and keeps. The queue consumer that
 * extracts each segment exactly once per model and prompt version, the results table and its
 * versioned items (results, the per-channel topic index, window replies, leases, the channel's
 * term statistics), their DynamoDB store and its memory double, the typed reader for users'
 * code, the redactor that makes them follow messages edited or deleted after delivery, and how
 * a segment is sent back to be extracted again. The results table's keys and definition are
 * `./schema/`.
 */

export { type ApiKeyCache, apiKeyCache } from "./api-key.js";
export {
  ANALYZER_DEFAULTS,
  type ApiKeySource,
  DEFAULT_BEDROCK_MODEL_ID,
  EXTRACT_BOUNDS,
  EXTRACT_DEFAULTS,
  EXTRACTORS,
  type ExtractFunctionConfig,
  type ExtractorKind,
  type ExtractVariable,
  ROUTES,
  readExtractConfig,
} from "./config.js";
export {
  REEXTRACT_ATTRIBUTE,
  type SegmentConsumerDependencies,
  segmentConsumer,
} from "./consumer.js";
export type { ExtractionMetricName, ExtractionMetrics } from "./consumer-report.js";
export {
  BudgetPausedError,
  CircuitOpenError,
  DeadlineError,
  KnowledgeConfigError,
  KnowledgeError,
  KnowledgeItemError,
  LeaseLostError,
  SegmentBusyError,
} from "./errors.js";
export {
  conversationSegment,
  type ExtractionOutcome,
  promptVersionOf,
  SegmentExtractor,
  type SegmentExtractorOptions,
} from "./extract-segment.js";
export {
  CircuitBreaker,
  type CircuitBreakerOptions,
  guardedLLM,
  TokenBudget,
  type TokenBudgetOptions,
  utcDay,
} from "./guard.js";
export {
  type AttemptLedger,
  DynamoDbLedger,
  MemoryLedger,
  type SpendCounter,
} from "./ledger.js";
export { MemoryResultStore } from "./memory-store.js";
export type {
  CurrentMessages,
  MessageChange,
  MessageState,
  MessageStates,
} from "./message-states.js";
export type { Question } from "./question-entry.js";
export {
  DEFAULT_QUESTION_LIMIT,
  KnowledgeReader,
  MAX_QUESTION_LIMIT,
  mergeSupports,
  type Topic,
  type TopicEmbeddings,
  type TopicEvidence,
} from "./reader.js";
export {
  KnowledgeRedactor,
  type KnowledgeRedactorOptions,
  type RedactionMetricName,
  type RedactionMetrics,
  type RequestReextraction,
} from "./redact.js";
export type { RedactionCounts } from "./redaction-plan.js";
export { GAVE_UP_ATTRIBUTE, queueUrlOf } from "./redelivery.js";
export { queueReextraction, reextractionMessage, storedSegmentBody } from "./reextraction.js";
export type { Lease, QuestionPage, ResultStore } from "./result-store.js";
export {
  DEFAULT_RETRY,
  type RetrySchedule,
  retryDelaySeconds,
  rideOutSeconds,
} from "./retry.js";
export type {
  QuestionEntry,
  SegmentResult,
  StoredQuestion,
  TopicSupport,
} from "./schema/items.js";
export { createResultsTable } from "./schema/table.js";
export { onTimeEnvelope, type SegmentEnvelope } from "./segment-envelope.js";
export { DynamoDbResultStore, type DynamoDbResultStoreOptions } from "./store.js";
export { type MessagesById, storedMessageStates } from "./stored-states.js";
export { type ExtractEnvironment, extractDependencies } from "./wiring.js";
