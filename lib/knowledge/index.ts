/**
 * Knowledge: what extraction learns from closed segments and keeps. The queue consumer that
 * extracts each segment exactly once per model and prompt version, the results table and its
 * versioned items (results, the per-channel topic index, window replies, leases, the channel's
 * term statistics), their DynamoDB store and its memory double, the typed reader for users'
 * code, the redactor that makes them follow messages edited or deleted after delivery, and how
 * a segment is sent back to be extracted again. The results table's keys and definition are
 * `./store/schema/`.
 */

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
  DEFAULT_QUESTION_LIMIT,
  KnowledgeReader,
  MAX_QUESTION_LIMIT,
  mergeSupports,
  type Topic,
  type TopicEmbeddings,
  type TopicEvidence,
} from "./read/reader.js";
export { DynamoDbResultStore, type DynamoDbResultStoreOptions } from "./store/dynamodb.js";
export {
  type AttemptLedger,
  DynamoDbLedger,
  MemoryLedger,
  type SpendCounter,
} from "./store/ledger.js";
export { MemoryResultStore } from "./store/memory.js";
export type {
  CurrentMessages,
  MessageChange,
  MessageState,
  MessageStates,
} from "./store/message-states.js";
export type { Lease, QuestionPage, ResultStore } from "./store/port.js";
export type { Question } from "./store/question-entry.js";
export type { RedactionCounts } from "./store/redaction-plan.js";
export type {
  QuestionEntry,
  SegmentResult,
  StoredQuestion,
  TopicSupport,
} from "./store/schema/items.js";
export { createResultsTable } from "./store/schema/table.js";
export { onTimeEnvelope, type SegmentEnvelope } from "./store/segment-envelope.js";
export { type ApiKeyCache, apiKeyCache } from "./write/api-key.js";
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
} from "./write/config.js";
export {
  REEXTRACT_ATTRIBUTE,
  type SegmentConsumerDependencies,
  segmentConsumer,
} from "./write/consumer.js";
export type { ExtractionMetricName, ExtractionMetrics } from "./write/consumer-report.js";
export {
  conversationSegment,
  type ExtractionOutcome,
  promptVersionOf,
  SegmentExtractor,
  type SegmentExtractorOptions,
} from "./write/extract-segment.js";
export {
  CircuitBreaker,
  type CircuitBreakerOptions,
  guardedLLM,
  TokenBudget,
  type TokenBudgetOptions,
  utcDay,
} from "./write/guard.js";
export {
  KnowledgeRedactor,
  type KnowledgeRedactorOptions,
  type RedactionMetricName,
  type RedactionMetrics,
  type RequestReextraction,
} from "./write/redact.js";
export { GAVE_UP_ATTRIBUTE, queueUrlOf } from "./write/redelivery.js";
export { queueReextraction, reextractionMessage, storedSegmentBody } from "./write/reextraction.js";
export {
  DEFAULT_RETRY,
  type RetrySchedule,
  retryDelaySeconds,
  rideOutSeconds,
} from "./write/retry.js";
export { type MessagesById, storedMessageStates } from "./write/stored-states.js";
export { type ExtractEnvironment, extractDependencies } from "./write/wiring.js";
