/**
 * What every convoseg table access shares. One document client recipe, batched writes that retry
 * what DynamoDB leaves unprocessed, table creation for local runs and tests, the classification of
 * failed requests, DynamoDB's item-size rules and TTL expiry times.
 */
export { type BatchWriteOptions, batchWriteAll } from "./batch-write.js";
export { documentClient } from "./documents.js";
export {
  cancellationReasons,
  isAmbiguous,
  isConditionFailure,
  isRefusedAsInvalid,
  isRetryable,
} from "./errors.js";
export {
  itemSize,
  MAX_ITEM_BYTES,
  READ_UNIT_BYTES,
  valueSize,
  type WireValue,
  WRITE_UNIT_BYTES,
  wireItemSize,
} from "./item-size.js";
export { projectionOf } from "./projection.js";
export { createTable } from "./table.js";
export { checkRetentionDays, DAY_MS, expirySeconds, MAX_RETENTION_DAYS } from "./ttl.js";
