/**
 * Knowledge: what extraction learns from closed segments and keeps. The queue consumer that
 * extracts each segment exactly once per model and prompt version, the results table and its
 * versioned items (results, the per-channel topic index, window replies, leases), and the typed
 * reader for users' code.
 */
export {
  ANALYZER_DEFAULTS,
  type ApiKeySource,
  DEFAULT_BEDROCK_MODEL_ID,
  EXTRACT_DEFAULTS,
  EXTRACTORS,
  type ExtractFunctionConfig,
  type ExtractorKind,
  type ExtractVariable,
  ROUTES,
  readExtractConfig,
} from "./config.js";
export {
  consumeSegment,
  type ExtractionLogger,
  type ExtractionMetricName,
  type ExtractionMetrics,
  queueUrlOf,
  REEXTRACT_ATTRIBUTE,
  retryDelaySeconds,
  type SegmentConsumerDependencies,
  segmentConsumer,
} from "./consumer.js";
export {
  KnowledgeConfigError,
  KnowledgeError,
  KnowledgeItemError,
  LeaseLostError,
  SegmentBusyError,
} from "./errors.js";
export {
  conversationSegment,
  type ExtractionOutcome,
  type ExtractionStatus,
  messageTurn,
  promptVersionOf,
  type SegmentEnvelope,
  SegmentExtractor,
  type SegmentExtractorOptions,
  topicSupports,
} from "./extract-segment.js";
export { KnowledgeReader, mergeSupports, type Topic, type TopicEvidence } from "./reader.js";
export {
  candidateId,
  type ReplacedResult,
  SCHEMA_VERSION,
  type SegmentResult,
  type SegmentUsage,
  type StoredCandidate,
  type TopicSupport,
  windowHash,
} from "./schema.js";
export {
  DynamoDbResultStore,
  type DynamoDbResultStoreOptions,
  type Lease,
  type ResultStore,
} from "./store.js";
export {
  createResultsTable,
  RESULTS_PARTITION_KEY,
  RESULTS_SORT_KEY,
  RESULTS_TTL_ATTRIBUTE,
  resultsTableDefinition,
} from "./table.js";
export {
  createLLM,
  type ExtractEnvironment,
  extractDependencies,
  modelKey,
} from "./wiring.js";
