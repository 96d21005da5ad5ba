import { isAmbiguous, isRetryable } from "convoseg/dynamodb";
import { isTransient, isTransientStatus } from "convoseg/transient";
import { describe, expect, it } from "vitest";

const named = (name: string, extra: object = {}) =>
  Object.assign(new Error(name), { name, ...extra });
const withStatus = (httpStatusCode: number) =>
  named("SomeServiceError", { $metadata: { httpStatusCode } });
const withCode = (code: string) => Object.assign(new Error(`connect ${code}`), { code });

describe("isTransient", () => {
  it.each([
    "ThrottlingException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "RequestThrottled",
    "KmsThrottled",
    "TooManyRequestsException",
    "InternalServerError",
    "InternalServerException",
    "ServiceUnavailable",
    "ServiceUnavailableException",
    "TimeoutError",
    "RequestTimeout",
    "ModelTimeoutException",
    "ModelNotReadyException",
  ])("retries the service error %s", (name) => {
    expect(isTransient(named(name))).toBe(true);
  });

  it.each([
    "ECONNRESET",
    "ECONNREFUSED",
    "ECONNABORTED",
    "EPIPE",
    "ETIMEDOUT",
    "EHOSTUNREACH",
    "ENETUNREACH",
    "EAI_AGAIN",
    "ERR_HTTP2_STREAM_ERROR",
    "ERR_HTTP2_SESSION_ERROR",
    "ERR_HTTP2_GOAWAY_SESSION",
    "ERR_HTTP2_STREAM_CANCEL",
  ])("retries the network failure %s, with or without a status", (code) => {
    expect(isTransient(withCode(code))).toBe(true);
    expect(isTransient(Object.assign(withCode(code), { $metadata: { httpStatusCode: 400 } }))).toBe(
      true,
    );
  });

  it("retries 408, 409, 429 and every 5xx, and no other status", () => {
    for (const status of [408, 409, 429, 500, 502, 503, 504, 599]) {
      expect(isTransient(withStatus(status)), String(status)).toBe(true);
      expect(isTransientStatus(status)).toBe(true);
    }
    for (const status of [200, 400, 401, 403, 404, 413, 422]) {
      expect(isTransient(withStatus(status)), String(status)).toBe(false);
      expect(isTransientStatus(status)).toBe(false);
    }
    expect(isTransientStatus(undefined)).toBe(false);
  });

  it("retries what the SDK marks retryable, and never an abort or a permanent error", () => {
    expect(isTransient(named("SomethingNew", { $retryable: { throttling: false } }))).toBe(true);
    expect(isTransient(named("AbortError", { code: "ECONNRESET" }))).toBe(false);
    for (const name of [
      "ValidationException",
      "AccessDeniedException",
      "ResourceNotFoundException",
    ]) {
      expect(isTransient(named(name, { $metadata: { httpStatusCode: 400 } })), name).toBe(false);
    }
    expect(isTransient(new Error("plain"))).toBe(false);
    expect(isTransient(undefined)).toBe(false);
    expect(isTransient("a string")).toBe(false);
  });
});

describe("the DynamoDB stores' rules on top of it", () => {
  it("retry every transient failure, DynamoDB's transaction conflicts, and cancellations without a permanent reason", () => {
    for (const error of [named("ThrottlingException"), withCode("EAI_AGAIN"), withStatus(503)]) {
      expect(isRetryable(error)).toBe(isTransient(error));
    }
    expect(isRetryable(named("TransactionConflictException"))).toBe(true);
    const cancelled = (...codes: string[]) =>
      named("TransactionCanceledException", {
        CancellationReasons: codes.map((Code) => ({ Code })),
      });
    expect(isRetryable(cancelled("None", "TransactionConflict"))).toBe(true);
    expect(isRetryable(cancelled("None", "ValidationError"))).toBe(false);
    expect(isRetryable(named("ConditionalCheckFailedException"))).toBe(false);
    expect(isRetryable(named("AbortError"))).toBe(false);
  });

  it("call a failure ambiguous only when the request may have been applied", () => {
    for (const code of ["ECONNRESET", "EPIPE", "ETIMEDOUT", "ERR_HTTP2_STREAM_ERROR"]) {
      expect(isAmbiguous(withCode(code)), code).toBe(true);
    }
    // Never sent: a refused or unresolved connection cannot have written anything.
    for (const code of ["ECONNREFUSED", "EHOSTUNREACH", "EAI_AGAIN", "ENOTFOUND"]) {
      expect(isAmbiguous(withCode(code)), code).toBe(false);
      expect(isRetryable(withCode(code)), code).toBe(true);
    }
    expect(isAmbiguous(withStatus(500))).toBe(true);
    expect(isAmbiguous(withStatus(429))).toBe(false);
    expect(isAmbiguous(named("AbortError"))).toBe(true);
  });
});
