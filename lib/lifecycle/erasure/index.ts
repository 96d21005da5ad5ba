/**
 * Erasure: removing a person from everything convoseg keeps (`eraseUser`; `npm start -- erase`,
 * the stack's `EraseUser` function), with the audit item that records each erasure
 * (docs/erasure.md).
 */
export {
  type AuditStore,
  type ErasedMessage,
  type ErasureAudit,
  type ErasureCounts,
  MemoryAuditStore,
  NO_COUNTS,
} from "./audit.js";
export { DynamoDbAuditStore } from "./audit-dynamodb.js";
export {
  type EraseOutcome,
  type EraseRequest,
  type ErasureDependencies,
  type ErasureMessages,
  eraseUser,
} from "./erase.js";
export { ErasureError, ErasureRequestError } from "./errors.js";
export {
  DEADLINE_MARGIN_MS,
  type EraseUserResponse,
  eraseRequestOf,
  runEraseUser,
} from "./operation.js";
export { mentions, type ScrubStore } from "./scrub.js";
export {
  addAuthorIndex,
  authorIndexState,
  backfillAuthorKeys,
  dynamoDbErasure,
  type ErasureTables,
} from "./wiring.js";
