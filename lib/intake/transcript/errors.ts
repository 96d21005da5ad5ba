/**
 * The transcript error family: a stable `code` and a literal `name` each (bundling renames
 * classes). A cap breach and a format failure are distinct classes, so a caller never mistakes
 * malformed input for input that is merely too large.
 */
export class TranscriptError extends Error {
  override readonly name: string = "TranscriptError";
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** Which cap a {@link ContextOverLimitError} names. */
export type TranscriptCap = "MAX_TRANSCRIPT_BYTES" | "MAX_FRAGMENT_BYTES" | "MAX_FRAGMENTS";

/**
 * A genuine size or count breach: the transcript is over `MAX_TRANSCRIPT_BYTES`, an unsplittable
 * fenced block is over `MAX_FRAGMENT_BYTES`, or more than `MAX_FRAGMENTS` segments remain after
 * merging. `limit` is the cap's value and `actual` the size (bytes) or count (fragments) found.
 */
export class ContextOverLimitError extends TranscriptError {
  override readonly name: string = "ContextOverLimitError";
  constructor(
    message: string,
    readonly cap: TranscriptCap,
    readonly limit: number,
    readonly actual: number,
  ) {
    super("TRANSCRIPT_CONTEXT_OVER_LIMIT", message);
  }
}

/**
 * A format failure: a malformed line under forced JSONL (`line` is its 1-based physical line
 * number, blank lines included), a JSONL transcript without a message line, or a lone surrogate
 * in the text (`offset` is its UTF-16 index, the position in the JavaScript string).
 */
export class SegmentationError extends TranscriptError {
  override readonly name: string = "SegmentationError";
  readonly line?: number;
  readonly offset?: number;

  constructor(message: string, where: { line?: number; offset?: number } = {}) {
    super("TRANSCRIPT_SEGMENTATION_FAILED", message);
    if (where.line !== undefined) this.line = where.line;
    if (where.offset !== undefined) this.offset = where.offset;
  }
}

/**
 * Bytes that are no text in the encoding read: binary data (a known file signature, a NUL),
 * UTF-16 or UTF-32 where UTF-8 was expected, or a byte sequence the encoding does not have.
 * `found` names what the bytes look like (`an ELF executable`, `UTF-16LE text`, `Latin-1 text`,
 * `binary data`), and `binary` whether that is data rather than text in another encoding;
 * `offset` is the byte of the file at fault and `line` its 1-based line, when known;
 * `suggested` is the encoding that would read the bytes, when one would.
 */
export class TranscriptEncodingError extends TranscriptError {
  override readonly name: string = "TranscriptEncodingError";
  readonly found: string;
  readonly binary: boolean;
  readonly offset?: number;
  readonly line?: number;
  readonly suggested?: "utf-16le" | "utf-16be" | "latin1" | "windows-1252";

  constructor(
    message: string,
    found: string,
    where: {
      offset?: number;
      line?: number;
      suggested?: "utf-16le" | "utf-16be" | "latin1" | "windows-1252";
      binary?: boolean;
    } = {},
  ) {
    super("TRANSCRIPT_NOT_TEXT", message);
    this.found = found;
    this.binary = where.binary ?? false;
    if (where.offset !== undefined) this.offset = where.offset;
    if (where.line !== undefined) this.line = where.line;
    if (where.suggested !== undefined) this.suggested = where.suggested;
  }
}
