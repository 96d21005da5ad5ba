/**
 * How a JSONL message's content becomes its text (`docs/specs/transcript.md` §5, "In this
 * port"): text parts verbatim, every other part a tag of its type (and name), a tool call with a
 * bounded summary of its input, a tool result with its own text, bounded. The bounds keep a long
 * file read or a test run from swamping the turn: the first {@link MAX_TOOL_RESULT_BYTES} bytes
 * of a result and {@link MAX_TOOL_INPUT_BYTES} of a call's input are kept, cut on a character
 * boundary and marked `… [cut: K of N bytes shown]`.
 *
 * The summaries are read leniently: a repeated, missing or oddly typed `input`, `arguments` or
 * result `content` shortens the summary and never makes a line malformed, so every line the
 * original accepted stays accepted.
 */
import { JsonObject, type JsonValue, MalformedLineError, parseJson } from "./json.js";
import { MAX_TOOL_INPUT_BYTES, MAX_TOOL_RESULT_BYTES } from "./limits.js";
import { measureUtf8 } from "./source.js";

/** The part types whose `text` is kept; every other part becomes a tag such as `[image]`. */
const TEXT_PART_TYPES = new Set(["text", "input_text", "output_text"]);
/** Between rendered parts and tool calls: a blank line, a paragraph cut for re-splits. */
export const PART_SEPARATOR = "\n\n";

/** A string `content` verbatim; an array of parts rendered in order and joined by a blank line. */
export function contentText(content: JsonValue, path: string): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) {
    throw malformed(`\`${path}\` must be a string or an array of parts, found ${kindOf(content)}`);
  }
  return content.map((part, index) => partText(part, `${path}[${index}]`)).join(PART_SEPARATOR);
}

/**
 * A text part's `text`; any other part as a tag naming its type and, when it has a string
 * `name`, that name: `[image]`, `[tool_use: Bash]`. A part with an `input` (a tool call) adds a
 * bounded summary of it after a space; a `…_result` part (a tool result) adds its content's
 * text, bounded, on the next line.
 */
function partText(part: JsonValue, path: string): string {
  if (!(part instanceof JsonObject)) {
    throw malformed(`\`${path}\` must be an object, found ${kindOf(part)}`);
  }
  const type = stringField(part, "type", `${path}.`);
  if (TEXT_PART_TYPES.has(type)) return stringField(part, "text", `${path}.`);
  const name = field(part, "name", `${path}.`);
  const tag = typeof name === "string" ? `[${type}: ${name}]` : `[${type}]`;
  const input = lenient(part, "input");
  if (input !== undefined) return `${tag} ${inputSummary(input)}`;
  if (type.endsWith("_result")) return withResult(tag, lenient(part, "content"));
  return tag;
}

/**
 * An OpenAI chat message's `tool_calls` (an array of `{function: {name, arguments}}`), each as
 * `[tool_call: NAME] ARGUMENTS` with the arguments bounded, joined by a blank line; undefined
 * when the message has no unique `tool_calls` array.
 */
export function toolCallsText(message: JsonObject): string | undefined {
  const calls = lenient(message, "tool_calls");
  if (!Array.isArray(calls)) return undefined;
  return calls
    .map((call) => {
      const fn = call instanceof JsonObject ? lenient(call, "function") : undefined;
      const name = fn instanceof JsonObject ? lenient(fn, "name") : undefined;
      const tag = typeof name === "string" ? `[tool_call: ${name}]` : "[tool_call]";
      const args = fn instanceof JsonObject ? lenient(fn, "arguments") : undefined;
      return args === undefined ? tag : `${tag} ${inputSummary(args)}`;
    })
    .join(PART_SEPARATOR);
}

/**
 * A Responses-API item that is a tool call (a `type` ending in `_call`: Codex CLI's
 * `function_call`, `custom_tool_call`, `local_shell_call`, …) as `[TYPE: NAME] INPUT`, its
 * input being the first of `arguments`, `input` and `action`; one ending in `_call_output` as
 * `[TYPE]` and its `output`'s text on the next line, bounded. Undefined for any other item.
 */
export function toolItemText(item: JsonObject, type: string): string | undefined {
  if (type.endsWith("_call_output")) return withResult(`[${type}]`, unwrapped(item));
  if (!type.endsWith("_call")) return undefined;
  const name = lenient(item, "name");
  const tag = typeof name === "string" ? `[${type}: ${name}]` : `[${type}]`;
  const input = lenient(item, "arguments") ?? lenient(item, "input") ?? lenient(item, "action");
  return input === undefined ? tag : `${tag} ${inputSummary(input)}`;
}

/**
 * A tool item's `output`; when it is the text of a JSON object with a string `output` (how Codex
 * CLI writes a command's output beside its metadata), that string.
 */
function unwrapped(item: JsonObject): JsonValue | undefined {
  const output = lenient(item, "output");
  if (typeof output !== "string" || !output.startsWith("{")) return output;
  try {
    const inner = parseJson(output);
    const text = inner instanceof JsonObject ? lenient(inner, "output") : undefined;
    return typeof text === "string" ? text : output;
  } catch {
    return output;
  }
}

/** A tool call's input: a string as it is, any other value as compact JSON; bounded. */
function inputSummary(input: JsonValue): string {
  return bounded(typeof input === "string" ? input : compactJson(input), MAX_TOOL_INPUT_BYTES);
}

/** `tag`, then on the next line the result's text, bounded, when it has any. */
function withResult(tag: string, result: JsonValue | undefined): string {
  const text = resultText(result);
  return text === "" ? tag : `${tag}\n${bounded(text, MAX_TOOL_RESULT_BYTES)}`;
}

/**
 * A tool result's text: a string as it is; an array's text items (a string, or an object with
 * a string `text`) and tags for its other typed items, joined by a blank line; null or nothing
 * as empty; any other value as compact JSON.
 */
function resultText(result: JsonValue | undefined): string {
  if (result === undefined || result === null) return "";
  if (typeof result === "string") return result;
  if (!Array.isArray(result)) return compactJson(result);
  const texts: string[] = [];
  for (const item of result) {
    if (typeof item === "string") texts.push(item);
    else if (item instanceof JsonObject) {
      const text = lenient(item, "text");
      const type = lenient(item, "type");
      if (typeof text === "string") texts.push(text);
      else if (typeof type === "string") texts.push(`[${type}]`);
    }
  }
  return texts.join(PART_SEPARATOR);
}

/**
 * `text` when it is at most `limit` UTF-8 bytes; else its longest prefix within `limit` that
 * ends on a character boundary, then `… [cut: K of N bytes shown]`.
 */
function bounded(text: string, limit: number): string {
  const total = measureUtf8(text).byteLength;
  if (total <= limit) return text;
  let kept = 0;
  let at = 0;
  while (at < text.length) {
    const unit = text.charCodeAt(at);
    const next = text.charCodeAt(at + 1);
    const pair = unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
    const width = unit < 0x80 ? 1 : unit < 0x800 ? 2 : pair ? 4 : 3;
    if (kept + width > limit) break;
    kept += width;
    at += pair ? 2 : 1;
  }
  return `${text.slice(0, at)}… [cut: ${kept} of ${total} bytes shown]`;
}

/** A parsed value written back as JSON without whitespace, members in their order. */
function compactJson(value: JsonValue): string {
  if (value instanceof JsonObject) {
    const members = [...value.fields].map(([key, v]) => `${JSON.stringify(key)}:${compactJson(v)}`);
    return `{${members.join(",")}}`;
  }
  if (Array.isArray(value)) return `[${value.map(compactJson).join(",")}]`;
  return JSON.stringify(value);
}

/** A member that must be there and be a string; `path` prefixes the reasons. */
export function stringField(object: JsonObject, key: string, path: string): string {
  const value = field(object, key, path);
  if (value === undefined) throw malformed(`missing field \`${path}${key}\``);
  if (typeof value !== "string") {
    throw malformed(`\`${path}${key}\` must be a string, found ${kindOf(value)}`);
  }
  return value;
}

/** A member the reader uses; repeating it is malformed, as serde's "duplicate field". */
export function field(object: JsonObject, key: string, path: string): JsonValue | undefined {
  if (object.repeatedKeys.has(key)) throw malformed(`duplicate field \`${path}${key}\``);
  return object.fields.get(key);
}

/** A member read only to enrich the text: undefined when absent or repeated, never an error. */
export function lenient(object: JsonObject, key: string): JsonValue | undefined {
  return object.repeatedKeys.has(key) ? undefined : object.fields.get(key);
}

export function malformed(reason: string): MalformedLineError {
  return new MalformedLineError(reason);
}

export function kindOf(value: JsonValue): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (value instanceof JsonObject) return "an object";
  return `a ${typeof value}`;
}
