/**
 * The results table, as code reads and writes it. The store port (`ResultStore`), its DynamoDB
 * store and in-memory double, the stored item types (v1; keys and the table definition are
 * `./schema/`), the message states a result was extracted from, and the attempt ledger that counts
 * the day's model spend in the same table.
 */
export type { CorrectionAction } from "./correction-item.js";
export {
  type Corrected,
  type CorrectionNote,
  correctResult,
  noteOf,
} from "./corrections.js";
export { DynamoDbResultStore } from "./dynamodb.js";
export { DynamoDbLedger, MemoryLedger, type SpendCounter } from "./ledger.js";
export { MemoryResultStore } from "./memory.js";
export type { MessageChange, MessageState, MessageStates } from "./message-states.js";
export type { ResultStore } from "./port.js";
export type { Question } from "./question-entry.js";
export type { RedactionCounts } from "./redaction-plan.js";
export type { SegmentResult, StoredQuestion, TopicSupport } from "./schema/items.js";
export { createResultsTable } from "./schema/table.js";
export { onTimeEnvelope, type SegmentEnvelope } from "./segment-envelope.js";
