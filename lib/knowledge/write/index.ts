/**
 * The path into the results table: the segment queue's consumer that extracts each segment
 * exactly once per model and prompt version, the segment extractor, the guard that bounds model
 * spend and outages, retry pacing, the redactor that makes stored knowledge follow edited and
 * deleted messages, re-extraction, and the extract function's configuration and wiring.
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
  REEXTRACT_REPLACING_ATTRIBUTE,
  type SegmentConsumerDependencies,
  segmentConsumer,
} from "./consumer.js";
export type { ExtractionMetricName, ExtractionMetrics } from "./consumer-report.js";
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
  KnowledgeRedactor,
  type KnowledgeRedactorOptions,
  REDACTION_METRICS,
  type RedactionMetricName,
  type RedactionMetrics,
  type RequestReextraction,
} from "./redact.js";
export { GAVE_UP_ATTRIBUTE, queueUrlOf } from "./redelivery.js";
export { queueReextraction, reextractionMessage, storedSegmentBody } from "./reextraction.js";
export {
  DEFAULT_RETRY,
  type RetrySchedule,
  retryDelaySeconds,
  rideOutSeconds,
} from "./retry.js";
export { type MessagesById, storedMessageStates } from "./stored-states.js";
export { type ExtractEnvironment, extractDependencies } from "./wiring.js";
