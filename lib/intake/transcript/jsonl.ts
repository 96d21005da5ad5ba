/**
 * JSONL turns (`docs/specs/transcript.md` §5, widened to the nested shapes agent tools write): one
 * message line, one turn. A blank line or a non-message object opens no turn; its bytes fold into
 * the preceding turn, or into the first one when none precedes, so the ranges still partition the
 * text. The accepted shapes are listed in the module comment of `segment-transcript.ts`.
 */

import { SegmentationError } from "./errors.js";
import { JsonObject, type JsonValue, MalformedLineError, parseJson } from "./json.js";
import {
  contentText,
  field,
  kindOf,
  lenient,
  malformed,
  PART_SEPARATOR,
  stringField,
  toolCallsText,
  toolItemText,
} from "./parts.js";
import type { RawPiece } from "./piece.js";
import { lineText, type Source, trimLineBreaks } from "./source.js";

interface Message {
  role: string;
  content: string;
  /** The line's own top-level `timestamp`, when it is a string. */
  timestamp?: string;
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
      const { role, content, timestamp } = message;
      const pieceStart = heldStart < 0 ? start : heldStart;
      const piece: RawPiece = { kind: "body", start: pieceStart, end, turn: pieces.length, role };
      piece.content = content;
      if (timestamp !== undefined) piece.timestamp = timestamp;
      pieces.push(piece);
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

/** A malformed line: its 1-based physical number and why (the reason alone, no prefix). */
export interface JsonlLineProblem {
  line: number;
  reason: string;
}

/** What reading every line of a text as JSONL finds, for a caller that reports bad files. */
export interface JsonlCheck {
  /** Physical lines (only `\n` ends one), blank ones included. */
  lines: number;
  /** Lines that are neither blank nor malformed and open a turn. */
  messageLines: number;
  /** Every malformed line, in order; the first is the one forced JSONL fails on. */
  problems: JsonlLineProblem[];
}

/** Reads every line as {@link jsonlPieces} does, going on past malformed ones to list them all. */
export function jsonlCheck(source: Source): JsonlCheck {
  const { bytes, lineStarts } = source;
  const lines = lineStarts.length - 1;
  const problems: JsonlLineProblem[] = [];
  let messageLines = 0;
  for (let line = 0; line < lines; line++) {
    if (trimLineBreaks(bytes, lineStarts[line], lineStarts[line + 1]) === lineStarts[line]) {
      continue;
    }
    try {
      if (messageOf(parseJson(lineText(source, line))) !== undefined) messageLines++;
    } catch (error) {
      if (!(error instanceof MalformedLineError)) throw error;
      problems.push({ line: line + 1, reason: error.message });
    }
  }
  return { lines, messageLines, problems };
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

/** A line's object read as a message, with the line's own string `timestamp` when it has one. */
function messageOf(line: JsonValue): Message | undefined {
  if (!(line instanceof JsonObject)) {
    throw malformed(`expected a JSON object, found ${kindOf(line)}`);
  }
  const message = recordMessage(line);
  const timestamp = lenient(line, "timestamp");
  if (message === undefined || typeof timestamp !== "string") return message;
  return { ...message, timestamp };
}

/**
 * The message a line's object holds, in this order:
 * 1. an agent-log record, a line with a string `type` and neither `role` nor `message` (Claude
 *    Code's `system`, `summary`, `file-history-snapshot`, Codex CLI's `response_item`, …): its
 *    top-level `content` is never read as a message; see {@link agentRecordMessage};
 * 2. a line with a top-level `role` or `content`, read as the original reads it (spec §5: every
 *    other field, a `message` included, is ignored);
 * 3. a wrapper: its `message` object is the message, its other fields ignored;
 * 4. anything else is a summary or bookkeeping line (undefined), where the original found no
 *    `role` and failed.
 */
function recordMessage(line: JsonObject): Message | undefined {
  const type = lenient(line, "type");
  const hasRole = line.fields.has("role");
  if (typeof type === "string" && !hasRole && !line.fields.has("message")) {
    return agentRecordMessage(line, type);
  }
  if (hasRole || line.fields.has("content")) return roleAndContent(line, "");
  const wrapped = field(line, "message", "");
  if (wrapped !== undefined) {
    if (!(wrapped instanceof JsonObject)) {
      throw malformed(`\`message\` must be an object, found ${kindOf(wrapped)}`);
    }
    return roleAndContent(wrapped, "message.");
  }
  return undefined;
}

/**
 * An agent-log record: its `payload` object (Codex CLI) or else the record itself is an item. An
 * item with a `role` is a message, read strictly (a payload's reasons name `payload.…`); a tool
 * call (`…_call`) is an `assistant` turn and its output (`…_call_output`) a `tool` turn; any
 * other item is a non-message line.
 */
function agentRecordMessage(record: JsonObject, type: string): Message | undefined {
  const payload = lenient(record, "payload");
  if (!(payload instanceof JsonObject)) return toolItem(record, type);
  if (payload.fields.has("role")) return roleAndContent(payload, "payload.");
  const itemType = lenient(payload, "type");
  return typeof itemType === "string" ? toolItem(payload, itemType) : undefined;
}

function toolItem(item: JsonObject, type: string): Message | undefined {
  const content = toolItemText(item, type);
  if (content === undefined) return undefined;
  return { role: type.endsWith("_output") ? "tool" : "assistant", content };
}

/**
 * The required string `role` and the `content` of a message object; `path` prefixes reasons. An
 * OpenAI chat message's `tool_calls` follow its content, and stand in for a null or missing one.
 */
function roleAndContent(object: JsonObject, path: string): Message {
  const role = stringField(object, "role", path);
  const calls = toolCallsText(object);
  const content = field(object, "content", path);
  if (calls !== undefined && (content === undefined || content === null)) {
    return { role, content: calls };
  }
  if (content === undefined) throw malformed(`missing field \`${path}content\``);
  const text = contentText(content, `${path}content`);
  if (calls === undefined || calls === "") return { role, content: text };
  return { role, content: text === "" ? calls : `${text}${PART_SEPARATOR}${calls}` };
}
