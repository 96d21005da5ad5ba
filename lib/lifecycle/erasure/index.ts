/**
 * Erasure: removing a person from everything convoseg keeps, with an audit item of each erasure.
 * `eraseUser` is what `npm start -- erase` and the stack's `EraseUser` function run
 * (docs/erasure.md).
 */
export { type AuditStore, auditKeyOf, MemoryAuditStore } from "./audit.js";
export { DynamoDbAuditStore } from "./audit-dynamodb.js";
export type { ErasureDependencies, ErasureMessages } from "./dependencies.js";
export { MemoryDigestArchive, s3DigestArchive } from "./digests.js";
export { type EraseOutcome, type EraseRequest, eraseUser } from "./erase.js";
export { ErasureError, ErasureRequestError, ErasureScopeError } from "./errors.js";
export { eraseRequestOf, runEraseUser } from "./operation.js";
export { addAuthorIndex, authorIndexState, backfillAuthorKeys, dynamoDbErasure } from "./wiring.js";
