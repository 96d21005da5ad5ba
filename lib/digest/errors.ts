/**
 * The digest module's error: a stable `code` and a literal `name` (bundling renames classes);
 * the message names the flag or option at fault.
 */
export class DigestError extends Error {
  override readonly name: string = "DigestError";
  readonly code: DigestErrorCode;

  constructor(code: DigestErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

export type DigestErrorCode =
  /** A `--since` or `--until` that is no duration or date. */
  | "DIGEST_BAD_TIME"
  /** A period that is empty, reversed or longer than {@link MAX_PERIOD_DAYS}. */
  | "DIGEST_BAD_PERIOD"
  /** No channel named. */
  | "DIGEST_NO_CHANNELS";

/** The longest period a digest covers: its activity lists every day of it. */
export const MAX_PERIOD_DAYS = 366;
