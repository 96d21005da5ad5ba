/**
 * Deterministic transcript segmentation, a port of the `segment` module of velesdb-memory
 * (`docs/specs/transcript.md`): a raw agent transcript, plain text with role markers or JSONL,
 * is cut into turns and, within each plain turn, into fenced code, log runs and body text. Pure:
 * no I/O, no clock, no randomness, no regular expressions; each stage is one linear scan, and the
 * same text and policy always give byte-identical output. Offsets are half-open UTF-8 byte
 * offsets into the original text, and every cap is in bytes.
 *
 * Pipeline: (1) a transcript over `MAX_TRANSCRIPT_BYTES` is rejected, then one with a lone
 * surrogate; (2) the format is detected, `auto` trying JSONL first and falling back to plain on
 * any failure, and the raw pieces built; (3) a fenced block over `MAX_FRAGMENT_BYTES` is
 * rejected; (4) oversized bodies and logs are re-split; (5) small neighbours merge; (6) more than
 * `MAX_FRAGMENTS` segments are rejected; (7) the segments are assembled.
 *
 * Accepted JSONL lines (one JSON object per line; only `\n` ends a line, trailing `\r`s and `\n`s
 * are stripped, JSON whitespace may surround the object):
 * - a message, `role` a string (any, verbatim) and `content` a string:
 *   `{"role":"assistant","content":"Deployed."}` (OpenAI style; other fields are ignored);
 * - a message whose `content` is an array of parts: a part of type `text`, `input_text` or
 *   `output_text` gives its `text`, any other part a tag of its type and, if it has a string
 *   `name`, that name (`[image]`, `[tool_use: Bash]`), a tool call (a part with an `input`) then
 *   a summary of its input (`[tool_use: Read] {"file_path":"a.ts"}`, at most
 *   `MAX_TOOL_INPUT_BYTES`) and a tool result (a `…_result` part) its content's text on the next
 *   line (at most `MAX_TOOL_RESULT_BYTES`; a cut is marked `… [cut: K of N bytes shown]`); the
 *   parts are joined in order by a blank line (`"\n\n"`), which is also where a re-split may cut:
 *   `{"role":"user","content":[{"type":"text","text":"Why?"},{"type":"image_url","image_url":{"url":"…"}}]}`;
 * - an OpenAI chat message's `tool_calls`, each `[tool_call: NAME] ARGUMENTS`, follow its
 *   content, or stand in for a null or missing one;
 * - a wrapper without a top-level `role` or `content` whose `message` object is such a message,
 *   every other field of the line ignored, as Claude Code writes its sessions:
 *   `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Fix the test"}]},"uuid":"4f1c…","timestamp":"2025-06-02T09:14:03.120Z"}`
 *   (a line with a top-level `role` or `content` is read as the original reads it, a `message`
 *   field then ignored like any other);
 * - an agent-log record, a line with a single string `type` and neither `role` nor `message`
 *   (Claude Code's `system`, `summary`, `file-history-snapshot`, …, whatever its `content`):
 *   a non-message line, unless its `payload` object (Codex CLI's `response_item`) or the record
 *   itself is an item that is a message (a `role`, read strictly), a tool call (a `type` ending
 *   in `_call`: an `assistant` turn `[TYPE: NAME] INPUT`) or a tool call's output (`_call_output`:
 *   a `tool` turn `[TYPE]` and the output's text, bounded);
 * - a non-message line, an object with none of `role`, `content` and `message` (where the
 *   original failed): `{"type":"summary","summary":"Fixing the flaky test","leafUuid":"9a7e…"}`;
 *   like a blank line it opens no turn and its bytes fold into the preceding turn (or the first,
 *   when it leads).
 * A message line's own top-level string `timestamp` is kept on its segments as written.
 * Anything else is malformed and names its 1-based line: not a JSON object, `content`
 * without `role` (in a line that is no agent-log record) or `role` without `content` (nor
 * `tool_calls`), a `role` that is not a
 * string, a `content` that is neither a string nor an array (`null` included), a part that is
 * not an object with a string `type`, a text part without a string `text`, a `message` that is
 * not an object, a field that is read (`role`, `content`, `message`, a part's `type`, `text` or
 * `name`) repeated in its object, or a `\u` escape of a lone surrogate. A whitespace-only line
 * is not blank and is malformed (as in the original); so is a line starting with a byte order
 * mark, which is no JSON whitespace. Reasons name a column: 1-based, in UTF-16 units of the line.
 *
 * Decisions where the spec is silent:
 * - Error messages are the spec's payloads, without the Rust `Display` prefixes; the class names
 *   the kind. The fragment-cap message names `minSegmentBytes` (this port's field), and advises
 *   raising it only when that can work; otherwise it says that the transcript must be split.
 * - A lone surrogate is a SegmentationError whose `offset` is its UTF-16 index; the size cap is
 *   checked first, counting a lone surrogate as 3 bytes.
 * - A fenced block over the cap inside JSONL content (left oversized by the original) is a
 *   ContextOverLimitError too, its size counted in decoded content bytes.
 * - A JSONL text with non-message lines but no message line gives "no jsonl message line found".
 * - Leading whitespace before a fence is Unicode White_Space, as Rust's `trim_start`.
 * - JSON nesting deeper than 128 levels is malformed (serde_json's limit).
 * - A byte order mark is text, as in the original: a leading one keeps the first line from
 *   matching a marker and makes a JSONL line malformed.
 * - The policy is checked: an unknown `format`, a `minSegmentBytes` that is not a non-negative
 *   integer or a `cacheSystemTurn` that is not a boolean is a RangeError; an undefined field
 *   takes its default.
 */
import { ContextOverLimitError, SegmentationError } from "./errors.js";
import { type JsonlCheck, jsonlCheck, jsonlPieces } from "./jsonl.js";
import { MAX_TRANSCRIPT_BYTES } from "./limits.js";
import {
  capFragmentCount,
  mergeSmallPieces,
  rejectOversizedFences,
  resplitOversized,
} from "./normalize.js";
import type { RawPiece } from "./piece.js";
import { plainPieces } from "./plain.js";
import { decodeUtf8, encodeUtf8, measureUtf8, type Source, sourceOf } from "./source.js";
import {
  DEFAULT_SEGMENTATION_POLICY,
  type SegmentationOutcome,
  type SegmentationPolicy,
  type SegmentFormat,
  type TranscriptSegment,
} from "./types.js";

/**
 * Segments `text` under `policy` (missing fields take {@link DEFAULT_SEGMENTATION_POLICY}). The
 * segments' ranges partition the text's bytes, in order; an empty text gives no segment.
 *
 * @throws ContextOverLimitError for a text over `MAX_TRANSCRIPT_BYTES`, a fenced block over
 *   `MAX_FRAGMENT_BYTES`, or more than `MAX_FRAGMENTS` segments after merging.
 * @throws SegmentationError for a lone surrogate (`offset`: its UTF-16 index), and under forced
 *   `jsonl` for a malformed line (`line`: its 1-based number) or a text without a message line.
 * @throws RangeError for an invalid policy, TypeError for a `text` that is not a string.
 */
export function segmentTranscript(
  text: string,
  policy: Partial<SegmentationPolicy> = {},
): SegmentationOutcome {
  const { format, minSegmentBytes, cacheSystemTurn } = resolvePolicy(policy);
  const source = wellFormedSource(text);
  const { formatDetected, pieces } = detectAndSegment(source, format);
  rejectOversizedFences(pieces);
  const resplit = resplitOversized(source.bytes, pieces);
  const merged = mergeSmallPieces(resplit, minSegmentBytes);
  capFragmentCount(resplit, merged.length);
  return {
    formatDetected,
    segments: merged.map((piece) => buildSegment(source.bytes, piece, cacheSystemTurn)),
    mergedSegments: resplit.length - merged.length,
  };
}

/**
 * Every line of `text` read as JSONL, going on past malformed lines: how many lines and message
 * lines it has and every malformed line with its reason (the first being the one forced JSONL
 * fails on). For a caller that reports why a text is not JSONL; the segmentation is unchanged.
 *
 * @throws what {@link segmentTranscript} throws before reading lines: a ContextOverLimitError
 *   over `MAX_TRANSCRIPT_BYTES`, a SegmentationError for a lone surrogate, a TypeError.
 */
export function checkJsonl(text: string): JsonlCheck {
  return jsonlCheck(wellFormedSource(text));
}

/** The policy with defaults filled in, checked because a caller may pass parsed JSON. */
function resolvePolicy(policy: Partial<SegmentationPolicy>): SegmentationPolicy {
  const {
    format = DEFAULT_SEGMENTATION_POLICY.format,
    minSegmentBytes = DEFAULT_SEGMENTATION_POLICY.minSegmentBytes,
    cacheSystemTurn = DEFAULT_SEGMENTATION_POLICY.cacheSystemTurn,
  } = policy ?? {};
  if (format !== "auto" && format !== "plain" && format !== "jsonl") {
    throw new RangeError(`format must be "auto", "plain" or "jsonl" (got ${describe(format)})`);
  }
  if (!Number.isSafeInteger(minSegmentBytes) || minSegmentBytes < 0) {
    throw new RangeError(
      `minSegmentBytes must be a non-negative integer (got ${describe(minSegmentBytes)})`,
    );
  }
  if (typeof cacheSystemTurn !== "boolean") {
    throw new RangeError(`cacheSystemTurn must be a boolean (got ${describe(cacheSystemTurn)})`);
  }
  return { format, minSegmentBytes, cacheSystemTurn };
}

/**
 * The text's bytes and line tables, after the two checks that need no scanning stage: the size
 * cap first (before any other work, as in the original), then well-formedness, since a lone
 * surrogate has no UTF-8 encoding and so no byte offsets.
 */
function wellFormedSource(text: string): Source {
  if (typeof text !== "string") {
    throw new TypeError(`text must be a string (got ${describe(text)})`);
  }
  const { byteLength, loneSurrogateAt } = measureUtf8(text);
  if (byteLength > MAX_TRANSCRIPT_BYTES) {
    throw new ContextOverLimitError(
      `transcript of ${byteLength} bytes exceeds the cap of ${MAX_TRANSCRIPT_BYTES} bytes`,
      "MAX_TRANSCRIPT_BYTES",
      MAX_TRANSCRIPT_BYTES,
      byteLength,
    );
  }
  if (loneSurrogateAt >= 0) {
    const unit = text.charCodeAt(loneSurrogateAt).toString(16).toUpperCase();
    throw new SegmentationError(
      `lone surrogate U+${unit} at UTF-16 offset ${loneSurrogateAt}: the transcript is not well-formed Unicode`,
      { offset: loneSurrogateAt },
    );
  }
  return sourceOf(text, encodeUtf8(text));
}

/**
 * The detected format and the raw pieces, in one pass for JSONL (each line is parsed once).
 * `auto` tries JSONL on a non-empty text and discards its error to fall back to plain; a forced
 * format never falls back.
 */
function detectAndSegment(
  source: Source,
  format: SegmentFormat,
): { formatDetected: "plain" | "jsonl"; pieces: RawPiece[] } {
  if (format === "jsonl") return { formatDetected: "jsonl", pieces: jsonlPieces(source) };
  if (format === "auto" && source.text.length > 0) {
    try {
      return { formatDetected: "jsonl", pieces: jsonlPieces(source) };
    } catch (error) {
      if (!(error instanceof SegmentationError)) throw error;
    }
  }
  return { formatDetected: "plain", pieces: plainPieces(source) };
}

/**
 * The public segment of a piece: its content (decoded JSONL, or the exact text of its range) and
 * metadata `{role, turn}`, plus `cache: true` for turn 0 when its role is `system` in any ASCII
 * case and the policy asks for it.
 */
function buildSegment(
  bytes: Uint8Array,
  piece: RawPiece,
  cacheSystemTurn: boolean,
): TranscriptSegment {
  const { turn, role, kind, start, end } = piece;
  const metadata: TranscriptSegment["metadata"] = { role, turn };
  if (cacheSystemTurn && turn === 0 && role !== null && isSystemRole(role)) metadata.cache = true;
  const content = piece.content ?? decodeUtf8(bytes, start, end);
  const segment: TranscriptSegment = {
    turn,
    role,
    kind,
    byteStart: start,
    byteEnd: end,
    content,
    metadata,
  };
  if (piece.timestamp !== undefined) segment.timestamp = piece.timestamp;
  return segment;
}

/** `role` equals `system` ignoring ASCII case only (Rust's `eq_ignore_ascii_case`). */
function isSystemRole(role: string): boolean {
  if (role.length !== 6) return false;
  for (let i = 0; i < 6; i++) {
    const unit = role.charCodeAt(i);
    const folded = unit >= 0x41 && unit <= 0x5a ? unit + 0x20 : unit;
    if (folded !== "system".charCodeAt(i)) return false;
  }
  return true;
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return value === null ? "null" : typeof value;
}
