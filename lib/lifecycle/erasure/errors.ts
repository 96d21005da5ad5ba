/** The erasure module's errors: one base class, a stable `code` per failure. */
export class ErasureError extends Error {
  override readonly name: string = "ErasureError";
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A request whose field is at fault (`field` names it). */
export class ErasureRequestError extends ErasureError {
  override readonly name: string = "ErasureRequestError";
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super("ERASURE_INVALID_REQUEST", `erasure: ${field}: ${reason}`);
  }
}
