/** How convoseg's DynamoDB callers classify a failed request. */

type SdkError = Error & { $metadata?: { httpStatusCode?: number }; code?: string };

const RETRYABLE = new Set([
  "TransactionCanceledException",
  "TransactionConflictException",
  "ProvisionedThroughputExceededException",
  "ThrottlingException",
  "RequestLimitExceeded",
  "InternalServerError",
  "ServiceUnavailable",
  "TimeoutError",
  "RequestTimeout",
]);

const NETWORK_CODES = new Set(["ECONNRESET", "ETIMEDOUT", "EPIPE"]);

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

/** Throttling, a conflict, a service error or a broken connection: trying again may succeed. */
export function isRetryable(error: unknown): boolean {
  const name = (error as Error)?.name;
  if (name === "AbortError") return false;
  if (name === "TransactionCanceledException") {
    return cancellationReasons(error).every(
      (r) => r !== "ValidationError" && r !== "ItemCollectionSizeLimitExceeded",
    );
  }
  return RETRYABLE.has(name) || isAmbiguous(error);
}

/**
 * Whether a failed request may still have been applied: the service erred after receiving it, or
 * the connection broke (or the caller gave up) before an answer came.
 */
export function isAmbiguous(error: unknown): boolean {
  const e = error as SdkError;
  if (e?.name === "AbortError") return true;
  if ((e?.$metadata?.httpStatusCode ?? 0) >= 500) return true;
  return (
    e?.name === "TimeoutError" || e?.name === "RequestTimeout" || NETWORK_CODES.has(e?.code ?? "")
  );
}
