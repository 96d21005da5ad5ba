/**
 * JSONL turns (`docs/specs/transcript.md` §5, widened to the nested shapes agent tools write): one
 * message line, one turn. A blank line or a non-message object opens no turn; its bytes fold into
 * the preceding turn, or into the first one when none precedes, so the ranges still partition the
 * text. The accepted shapes are listed in the module comment of `segment-transcript.ts`.
 */

import { SegmentationError } from "./errors.js";
import { JsonObject, type JsonValue, MalformedLineError, parseJson } from "./json.js";
import type { RawPiece } from "./piece.js";
import { lineText, type Source, trimLineBreaks } from "./source.js";

/** The part types whose `text` is kept; every other part becomes a tag such as `[image]`. */
const TEXT_PART_TYPES = new Set(["text", "input_text", "output_text"]);
/** Between the rendered parts of an array `content`: a blank line, a paragraph cut for re-splits. */
const PART_SEPARATOR = "\n\n";

interface Message {
  role: string;
  content: string;
}

/**
 * One `body` piece per message line, in order; turns count message lines from 0. The first
 * malformed line is a SegmentationError naming its 1-based physical line number; so is a text
 * without a message line.
 */
export function jsonlPieces(source: Source): RawPiece[] {
  const { bytes, lineStarts } = source;
  const pieces: RawPiece[] = [];
  let heldStart = -1;
  let nonBlankLines = 0;
  for (let line = 0; line < lineStarts.length - 1; line++) {
    const start = lineStarts[line];
    const end = lineStarts[line + 1];
    const blank = trimLineBreaks(bytes, start, end) === start;
    if (!blank) nonBlankLines++;
    const message = blank ? undefined : messageOnLine(lineText(source, line), line + 1);
    const last = pieces.at(-1);
    if (message !== undefined) {
      const { role, content } = message;
      const pieceStart = heldStart < 0 ? start : heldStart;
      pieces.push({ kind: "body", start: pieceStart, end, turn: pieces.length, role, content });
      heldStart = -1;
    } else if (last !== undefined) {
      last.end = end;
    } else if (heldStart < 0) {
      heldStart = start;
    }
  }
  if (pieces.length === 0) {
    throw new SegmentationError(
      nonBlankLines === 0 ? "no non-blank jsonl line found" : "no jsonl message line found",
    );
  }
  return pieces;
}

/** The message of a non-blank line, or undefined for a non-message object; malformed throws. */
function messageOnLine(text: string, lineNumber: number): Message | undefined {
  try {
    return messageOf(parseJson(text));
  } catch (error) {
    if (!(error instanceof MalformedLineError)) throw error;
    throw new SegmentationError(
      `jsonl line ${lineNumber}: not a valid {role, content} object: ${error.message}`,
      { line: lineNumber },
    );
  }
}

/**
 * A line's object read as a message. A line with a top-level `role` or `content` is read as the
 * original reads it (spec §5: every other field, a `message` included, is ignored). Otherwise its
 * `message` object is the message (a wrapper, its other fields ignored); otherwise it is a
 * summary or bookkeeping line (undefined), where the original found no `role` and failed.
 */
function messageOf(line: JsonValue): Message | undefined {
  if (!(line instanceof JsonObject)) {
    throw malformed(`expected a JSON object, found ${kindOf(line)}`);
  }
  if (line.fields.has("role") || line.fields.has("content")) return roleAndContent(line, "");
  const wrapped = field(line, "message", "");
  if (wrapped !== undefined) {
    if (!(wrapped instanceof JsonObject)) {
      throw malformed(`\`message\` must be an object, found ${kindOf(wrapped)}`);
    }
    return roleAndContent(wrapped, "message.");
  }
  // The rule, over the original's: none of role, content and message is no message.
  return undefined;
}

/** The required string `role` and the `content` of a message object; `path` prefixes reasons. */
function roleAndContent(object: JsonObject, path: string): Message {
  const role = stringField(object, "role", path);
  const content = field(object, "content", path);
  if (content === undefined) throw malformed(`missing field \`${path}content\``);
  return { role, content: contentText(content, `${path}content`) };
}

/** A string `content` verbatim; an array of parts rendered in order and joined by a blank line. */
function contentText(content: JsonValue, path: string): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) {
    throw malformed(`\`${path}\` must be a string or an array of parts, found ${kindOf(content)}`);
  }
  return content.map((part, index) => partText(part, `${path}[${index}]`)).join(PART_SEPARATOR);
}

/**
 * A text part's `text`; any other part as a tag naming its type and, when it has a string
 * `name` (a tool call), that name: `[tool_use: Bash]`, `[image]`, `[tool_result]`.
 */
function partText(part: JsonValue, path: string): string {
  if (!(part instanceof JsonObject)) {
    throw malformed(`\`${path}\` must be an object, found ${kindOf(part)}`);
  }
  const type = stringField(part, "type", `${path}.`);
  if (TEXT_PART_TYPES.has(type)) return stringField(part, "text", `${path}.`);
  const name = field(part, "name", `${path}.`);
  return typeof name === "string" ? `[${type}: ${name}]` : `[${type}]`;
}

/** A member that must be there and be a string; `path` prefixes the reasons. */
function stringField(object: JsonObject, key: string, path: string): string {
  const value = field(object, key, path);
  if (value === undefined) throw malformed(`missing field \`${path}${key}\``);
  if (typeof value !== "string") {
    throw malformed(`\`${path}${key}\` must be a string, found ${kindOf(value)}`);
  }
  return value;
}

/** A member the reader uses; repeating it is malformed, as serde's "duplicate field". */
function field(object: JsonObject, key: string, path: string): JsonValue | undefined {
  if (object.repeatedKeys.has(key)) throw malformed(`duplicate field \`${path}${key}\``);
  return object.fields.get(key);
}

function malformed(reason: string): MalformedLineError {
  return new MalformedLineError(reason);
}

function kindOf(value: JsonValue): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (value instanceof JsonObject) return "an object";
  return `a ${typeof value}`;
}
