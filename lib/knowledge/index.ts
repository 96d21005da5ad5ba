/**
 * Knowledge: what extraction learns from closed segments and keeps. Its parts have their own
 * entry points: `convoseg/knowledge/store` (the results table: port, DynamoDB store, memory
 * double, item types; keys and definition in `convoseg/knowledge/store/schema`),
 * `convoseg/knowledge/write` (the consumer, the extractor, redaction, re-extraction) and
 * `convoseg/knowledge/read` (the reader). This barrel holds what they share: the error family
 * and the registry of knowledge kinds (what each kind holds, and how it is redacted and erased).
 */
export {
  BudgetPausedError,
  CircuitOpenError,
  CorrectionError,
  DeadlineError,
  KnowledgeConfigError,
  KnowledgeError,
  KnowledgeItemError,
  LeaseLostError,
  SegmentBusyError,
} from "./errors.js";
export {
  type DerivedIndexName,
  type ErasureCountName,
  type ErasurePath,
  inResultsTable,
  KIND_COUNTS,
  KINDS,
  type KnowledgeKind,
  kindOf,
  noCounts,
} from "./kinds.js";
