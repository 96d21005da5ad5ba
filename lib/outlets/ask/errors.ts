/**
 * The ask module's error family: a stable `code` and a literal `name` (bundling renames classes).
 * A message names what is at fault, never the question's words or a reply address's token.
 */
export class AskError extends Error {
  override readonly name: string = "AskError";
  readonly code: AskErrorCode;

  constructor(code: AskErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

type AskErrorCode =
  /** A job that is not one the receivers make (a reply address not allowed), or a bad id. */
  | "ASK_BAD_JOB"
  /** The platform refused or failed a post (the answer, the command's registration). */
  | "ASK_POST_FAILED";
