/**
 * The path into the results table. The segment queue's consumer that extracts each segment exactly
 * once per model and prompt version, the segment extractor, the guard that bounds model spend and
 * outages, retry pacing, the redactor that makes stored knowledge follow edited and deleted
 * messages, re-extraction, and the extract function's configuration and wiring.
 */
export { type ApiKeyCache, apiKeyCache } from "./api-key.js";
export {
  REEXTRACT_ATTRIBUTE,
  REEXTRACT_REPLACING_ATTRIBUTE,
  type SegmentConsumerDependencies,
  segmentConsumer,
} from "./consumer.js";
export type { ExtractionMetricName, ExtractionMetrics } from "./consumer-report.js";
export { type CorrectionRequest, correctQuestion } from "./correct.js";
export { forgetCorrector } from "./correction-follow.js";
export {
  conversationSegment,
  type ExtractionOutcome,
  promptVersionOf,
  SegmentExtractor,
} from "./extract-segment.js";
export { CircuitBreaker, guardedLLM, TokenBudget, utcDay } from "./guard.js";
export { linkAdvisor } from "./link-advisor.js";
export {
  KnowledgeRedactor,
  type KnowledgeRedactorOptions,
  REDACTION_METRICS,
  type RedactionMetricName,
  type RedactionMetrics,
} from "./redact.js";
export { GAVE_UP_ATTRIBUTE, queueUrlOf } from "./redelivery.js";
export { queueReextraction, reextractionMessage, storedSegmentBody } from "./reextraction.js";
export {
  DEFAULT_RETRY,
  INVALID_OUTPUT_ATTEMPTS,
  type RetrySchedule,
  retryDelaySeconds,
  rideOutSeconds,
} from "./retry.js";
export { storedMessageStates } from "./stored-states.js";
export { extractDependencies, linkAdvisorOf } from "./wiring.js";
