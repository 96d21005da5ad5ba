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

/**
 * How providers say a prompt is longer than the model's context: OpenAI and vLLM
 * (`context_length_exceeded`, "maximum context length"), Anthropic on Bedrock ("prompt is too
 * long", "Input is too long"), Ollama and others ("context window", "too many tokens").
 */
const CONTEXT_LENGTH =
  /context[_ ]length|context window|maximum context|prompt is too long|input is too long|too many (input )?tokens/i;

/**
 * Whether the provider refused the call because its prompt does not fit the model's context
 * (a 400 or 413 that says so): the same prompt can never succeed, a shorter one can.
 */
export function isContextLengthError(error: unknown): boolean {
  return (
    error instanceof LLMError &&
    (error.status === 400 || error.status === 413) &&
    CONTEXT_LENGTH.test(error.message)
  );
}

/**
 * Whether a failure cannot succeed on a retry of the same segment: a refusal of the request
 * itself (400, 404, 413, 422, …). Refused credentials or access (401, 403) are not: they are the
 * deployment's, not the segment's, and pass once fixed. Nor is a reply that stayed invalid after
 * its repair request: models sample, and a later attempt at the same prompt usually parses.
 */
export function isPermanentFailure(error: unknown): boolean {
  return (
    error instanceof LLMError &&
    !error.retryable &&
    error.kind === "status" &&
    error.status !== 401 &&
    error.status !== 403
  );
}
