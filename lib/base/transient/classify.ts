/**
 * Whether a failed SDK or HTTP request may succeed if it is made again: the one rule the DynamoDB
 * stores, SQS delivery and the LLM adapters share, so that a failure one of them retries is not
 * given up on by another.
 */

/** What the AWS SDK and Node's HTTP clients put on an error; all of it optional. */
type RequestError = {
  name?: string;
  code?: string;
  $retryable?: unknown;
  $metadata?: { httpStatusCode?: number };
};

/** Services' names for "too many requests, slow down". */
const THROTTLING_ERRORS: ReadonlySet<string> = new Set([
  "ThrottlingException",
  "Throttling",
  "ThrottledException",
  "TooManyRequestsException",
  "RequestThrottled",
  "RequestThrottledException",
  "RequestLimitExceeded",
  "ProvisionedThroughputExceededException",
  "KmsThrottled",
  "SlowDown",
]);

/** Services' names for an error on their side or a request that ran out of time. */
const SERVICE_ERRORS: ReadonlySet<string> = new Set([
  "InternalServerError",
  "InternalServerException",
  "InternalFailure",
  "ServiceUnavailable",
  "ServiceUnavailableException",
  "TimeoutError",
  "RequestTimeout",
  "RequestTimeoutException",
  // Bedrock's: the model took too long, or is still being loaded.
  "ModelTimeoutException",
  "ModelNotReadyException",
]);

/** Socket failures before the request was sent: it cannot have been applied. */
const UNSENT_NETWORK_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * Socket and HTTP/2 session failures that may come after the request was sent: it may have been
 * applied, and no answer says so.
 */
export const IN_FLIGHT_NETWORK_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "ERR_HTTP2_STREAM_ERROR",
  "ERR_HTTP2_SESSION_ERROR",
  "ERR_HTTP2_GOAWAY_SESSION",
  "ERR_HTTP2_STREAM_CANCEL",
  "ERR_HTTP2_INVALID_SESSION",
]);

/** 408 (timeout), 409 (a conflict such as a lock held), 429 (throttled) and every 5xx. */
export function isTransientStatus(status: number | undefined): boolean {
  return (
    status !== undefined && (status === 408 || status === 409 || status === 429 || status >= 500)
  );
}

/** The HTTP status the service answered with, if an answer came. */
export function httpStatusOf(error: unknown): number | undefined {
  return (error as RequestError | undefined)?.$metadata?.httpStatusCode;
}

/** The request may not have reached the service, or the service failed after receiving it. */
export function isNetworkFailure(error: unknown): boolean {
  const code = (error as RequestError | undefined)?.code ?? "";
  return UNSENT_NETWORK_CODES.has(code) || IN_FLIGHT_NETWORK_CODES.has(code);
}

/**
 * Throttling, a service-side error or timeout, a transient HTTP status, a network failure, or
 * an error the SDK itself marks retryable. An abort is never transient: the caller gave up.
 */
export function isTransient(error: unknown): boolean {
  const e = error as RequestError | undefined;
  const name = e?.name ?? "";
  if (name === "AbortError") return false;
  return (
    THROTTLING_ERRORS.has(name) ||
    SERVICE_ERRORS.has(name) ||
    e?.$retryable !== undefined ||
    isTransientStatus(httpStatusOf(error)) ||
    isNetworkFailure(error)
  );
}
