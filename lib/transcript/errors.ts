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
