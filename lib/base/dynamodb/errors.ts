/** How convoseg's DynamoDB callers classify a failed request. */
import { httpStatusOf, IN_FLIGHT_NETWORK_CODES, isTransient } from "../transient/index.js";

/** DynamoDB's own conflict, beside the rule every service shares. */
const TRANSACTION_CONFLICT = "TransactionConflictException";

/** A condition expression did not hold (a single write's, not a transaction's). */
export function isConditionFailure(error: unknown): boolean {
  return (error as Error)?.name === "ConditionalCheckFailedException";
}

/** The reasons of a cancelled transaction, one per action ("None" for those that were fine). */
export function cancellationReasons(error: unknown): string[] {
  if ((error as Error)?.name !== "TransactionCanceledException") return [];
  const reasons =
    (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.map((reason) => reason.Code ?? "None");
}

/**
 * The service refused the request as invalid (a batch writing one key twice, an item past the
 * size limit, a malformed key): the same request can never succeed.
 */
export function isRefusedAsInvalid(error: unknown): boolean {
  return (error as Error)?.name === "ValidationException";
}

/** Throttling, a conflict, a service error or a broken connection: trying again may succeed. */
export function isRetryable(error: unknown): boolean {
  const name = (error as Error)?.name;
  if (name === "AbortError") return false;
  if (name === "TransactionCanceledException") {
    return cancellationReasons(error).every(
      (r) => r !== "ValidationError" && r !== "ItemCollectionSizeLimitExceeded",
    );
  }
  // Every ambiguous failure but an abort is transient too.
  return name === TRANSACTION_CONFLICT || isTransient(error);
}

/**
 * Whether a failed request may still have been applied: the service erred after receiving it, or
 * the connection broke (or the caller gave up) before an answer came.
 */
export function isAmbiguous(error: unknown): boolean {
  const e = error as (Error & { code?: string }) | undefined;
  if (e?.name === "AbortError") return true;
  if ((httpStatusOf(error) ?? 0) >= 500) return true;
  return (
    e?.name === "TimeoutError" ||
    e?.name === "RequestTimeout" ||
    IN_FLIGHT_NETWORK_CODES.has(e?.code ?? "")
  );
}
