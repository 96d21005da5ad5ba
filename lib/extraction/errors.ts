/**
 * The extraction error family: a stable `code` and a literal `name` each (bundling renames
 * classes). An LLM failure is never turned into "no candidates".
 */
export class ExtractionError extends Error {
  override readonly name: string = "ExtractionError";
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * How a model call failed: the provider answered with an error `status`; it could not be reached
 * (`connection`: refused, unknown host, reset); it did not answer within the timeout (`timeout`);
 * the caller aborted (`aborted`); or anything else (`other`: a request refused before it was
 * sent, missing credentials).
 */
export type LLMFailureKind = "status" | "connection" | "timeout" | "aborted" | "other";

/**
 * The provider did not answer: throttled past the retries, a server error, a timeout, refused
 * credentials, an abort. `retryable` says whether the same call may succeed later (throttling,
 * outages), which a queue consumer uses to fail the record for a retry with backoff; `kind` says
 * how it failed (default `status` when there is one, else `other`), which a local run uses to
 * name the cause and to stop when every call fails the same way.
 */
export class LLMError extends ExtractionError {
  override readonly name: string = "LLMError";
  readonly kind: LLMFailureKind;
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
    options?: { cause?: unknown; kind?: LLMFailureKind },
  ) {
    super("EXTRACTION_LLM_FAILED", message, options);
    this.kind = options?.kind ?? (status === undefined ? "other" : "status");
  }
}

/** The model's reply is not JSON, or not the JSON asked for; `raw` is what it said. */
export class InvalidModelOutputError extends ExtractionError {
  override readonly name: string = "InvalidModelOutputError";
  constructor(
    readonly reason: string,
    readonly raw: string,
  ) {
    super("EXTRACTION_INVALID_OUTPUT", `invalid model output: ${reason}`);
  }
}
