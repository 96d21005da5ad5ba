/**
 * A bounded-memory reader of one large JSON document (a DiscordChatExporter channel file, a
 * Telegram `result.json`): it walks the structure without building it and hands over, as raw
 * text, only the values the caller selects by path (each message of `messages`, the `channel`
 * object), which the caller then `JSON.parse`s one at a time. Memory is the largest selected value
 * plus one chunk, whatever the file's size. Values it skips are not validated.
 */
import { createReadStream } from "node:fs";
import { jsonErrorAt } from "./context.js";
import { ExportFormatError } from "./errors.js";

export type JsonPath = readonly (string | number)[];

/**
 * The most text held at once: the longest selected value (one message) or key. No chat message
 * comes near it (Telegram's longest is 4,096 characters, with its entities a few tens of kB); a
 * longer one is a damaged or hostile file, and holding it would cost memory and time without end.
 */
const MAX_HELD_CHARS = 8 * 1024 * 1024;

/** What to do with the value at a path: hand it over, walk into it, or pass it by. */
export type Selection = "capture" | "descend" | "skip";

export interface JsonValueAt {
  path: JsonPath;
  raw: string;
}

const VALUE = 0;
const VALUE_OR_END = 1;
const KEY = 2;
const KEY_OR_END = 3;
const COLON = 4;
const COMMA_OR_END = 5;
const DONE = 6;

interface Frame {
  array: boolean;
  key: string | number;
  state: number;
}

interface OpenValue {
  start: number;
  /** -1 until the first character is seen. */
  depth: number;
  inString: boolean;
  scalar: boolean;
  path: JsonPath | undefined;
}

/** `messages[3].author`: a path as error messages name it. */
export function pathText(path: JsonPath): string {
  let text = "";
  for (const key of path) text += typeof key === "number" ? `[${key}]` : text ? `.${key}` : key;
  return text || "(root)";
}

export class JsonScanner {
  private buf = "";
  private i = 0;
  private dropped = 0;
  private readonly stack: Frame[] = [];
  private rootState = VALUE;
  private value: OpenValue | undefined;

  constructor(
    private readonly file: string,
    private readonly select: (path: JsonPath) => Selection,
  ) {}

  /** Feeds the next piece of text; returns the selected values it completes. */
  push(chunk: string): JsonValueAt[] {
    if (this.dropped === 0 && this.buf === "" && chunk.charCodeAt(0) === 0xfeff) {
      chunk = chunk.slice(1);
    }
    this.buf += chunk;
    const out = this.run(false);
    const keep = this.value?.path ? this.value.start : Math.min(this.i, this.buf.length);
    if (keep > 0) {
      this.buf = this.buf.slice(keep);
      this.dropped += keep;
      this.i -= keep;
      if (this.value) this.value.start -= keep;
    }
    if (this.buf.length > MAX_HELD_CHARS) {
      const path = this.value?.path ?? this.stack.map((f) => f.key);
      throw new ExportFormatError(
        this.file,
        `${pathText(path)} (character ${this.dropped + 1})`,
        "entry",
        `longer than ${MAX_HELD_CHARS / 1024 / 1024} MiB: no chat message is that long (a damaged or hostile file)`,
      );
    }
    return out;
  }

  /** Ends the input: returns the last values, or throws when the document is incomplete. */
  end(): JsonValueAt[] {
    const out = this.run(true);
    if (this.rootState !== DONE || this.stack.length > 0 || this.value) {
      this.fail("document", "the file ends before the JSON does (truncated?)");
    }
    return out;
  }

  private run(final: boolean): JsonValueAt[] {
    const out: JsonValueAt[] = [];
    const buf = this.buf;
    for (;;) {
      if (this.value) {
        if (!this.scanValue(final, out)) return out;
        continue;
      }
      let i = this.i;
      while (i < buf.length && isSpace(buf.charCodeAt(i))) i++;
      this.i = i;
      if (i >= buf.length) return out;
      const c = buf[i];
      const frame = this.stack.at(-1);
      const state = frame ? frame.state : this.rootState;
      switch (state) {
        case VALUE_OR_END:
        case VALUE: {
          if (c === "]" && state === VALUE_OR_END) {
            this.stack.pop();
            this.i++;
            break;
          }
          if (frame) frame.state = COMMA_OR_END;
          else this.rootState = DONE;
          const path = this.stack.map((f) => f.key);
          const selection = this.select(path);
          if ((c === "{" || c === "[") && selection === "descend") {
            const array = c === "[";
            this.stack.push({
              array,
              key: array ? 0 : "",
              state: array ? VALUE_OR_END : KEY_OR_END,
            });
            this.i++;
          } else {
            this.value = {
              start: i,
              depth: -1,
              inString: false,
              scalar: false,
              path: selection === "capture" ? path : undefined,
            };
          }
          break;
        }
        case KEY_OR_END:
        case KEY: {
          const current = frame as Frame;
          if (c === "}" && state === KEY_OR_END) {
            this.stack.pop();
            this.i++;
            break;
          }
          if (c !== '"') this.fail("key", `expected a property name, found ${JSON.stringify(c)}`);
          const end = stringEnd(buf, i + 1);
          if (end < 0) return out;
          const raw = buf.slice(i, end + 1);
          current.key = raw.includes("\\") ? (JSON.parse(raw) as string) : raw.slice(1, -1);
          current.state = COLON;
          this.i = end + 1;
          break;
        }
        case COLON:
          if (c !== ":") this.fail("document", `expected ":", found ${JSON.stringify(c)}`);
          (frame as Frame).state = VALUE;
          this.i++;
          break;
        case COMMA_OR_END: {
          const current = frame as Frame;
          if (c === ",") {
            if (current.array) {
              current.key = (current.key as number) + 1;
              current.state = VALUE;
            } else current.state = KEY;
          } else if (c === (current.array ? "]" : "}")) {
            this.stack.pop();
          } else {
            this.fail(
              "document",
              `expected "," or "${current.array ? "]" : "}"}", found ${JSON.stringify(c)}`,
            );
          }
          this.i++;
          break;
        }
        default:
          this.fail("document", "more data after the end of the JSON value");
      }
    }
  }

  /** Advances over the open value; true when it is complete (and handed over if selected). */
  private scanValue(final: boolean, out: JsonValueAt[]): boolean {
    const v = this.value as OpenValue;
    const buf = this.buf;
    const length = buf.length;
    let i = this.i;
    if (v.depth === -1) {
      const c = buf.charCodeAt(i);
      if (c === 123 || c === 91) v.depth = 1;
      else if (c === 34) {
        v.depth = 0;
        v.inString = true;
      } else {
        v.depth = 0;
        v.scalar = true;
      }
      i++;
    }
    let end = -1;
    if (v.scalar) {
      while (i < length) {
        const c = buf.charCodeAt(i);
        if (c === 44 || c === 125 || c === 93 || isSpace(c)) break;
        i++;
      }
      if (i < length || final) end = i;
    } else {
      let depth = v.depth;
      let inString = v.inString;
      while (i < length) {
        const c = buf.charCodeAt(i);
        if (inString) {
          // Most of a document is string content: jump to the next quote natively.
          const quote = buf.indexOf('"', i);
          if (quote < 0) {
            i = afterTail(buf, i);
            break;
          }
          let slash = quote - 1;
          while (slash >= i && buf.charCodeAt(slash) === 92) slash--;
          i = quote + 1;
          // An odd run of backslashes escapes the quote; the string goes on.
          if ((quote - 1 - slash) % 2 === 1) continue;
          inString = false;
          if (depth === 0) {
            end = i;
            break;
          }
        } else {
          i++;
          if (c === 34) inString = true;
          else if (c === 123 || c === 91) depth++;
          else if (c === 125 || c === 93) {
            if (--depth === 0) {
              end = i;
              break;
            }
          }
        }
      }
      v.depth = depth;
      v.inString = inString;
    }
    if (end < 0) {
      this.i = i;
      if (final) this.fail("document", "the file ends inside a value (truncated?)");
      return false;
    }
    if (v.path) out.push({ path: v.path, raw: buf.slice(v.start, end) });
    this.value = undefined;
    this.i = end;
    return true;
  }

  private fail(field: string, reason: string): never {
    const path = this.stack.map((f) => f.key);
    throw new ExportFormatError(
      this.file,
      `${pathText(path)} (character ${this.dropped + this.i + 1})`,
      field,
      `not valid JSON: ${reason}`,
    );
  }
}

/**
 * Where scanning resumes after the rest of a string that has no quote: past the end, and one
 * further when the text ends in an escaping backslash (the next chunk's first character is
 * escaped; indices stay valid as the buffer only grows until it is compacted).
 */
function afterTail(buf: string, from: number): number {
  let slash = buf.length - 1;
  while (slash >= from && buf.charCodeAt(slash) === 92) slash--;
  return buf.length + ((buf.length - 1 - slash) % 2);
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** The index of the quote closing a string whose content starts at `from`, or -1. */
function stringEnd(buf: string, from: number): number {
  for (let i = from; i < buf.length; i++) {
    const c = buf.charCodeAt(i);
    if (c === 92) i++;
    else if (c === 34) return i;
  }
  return -1;
}

/** Reads a JSON file from disk in chunks, handing over the selected values as they complete. */
export function jsonFileValues(
  path: string,
  file: string,
  select: (path: JsonPath) => Selection,
): AsyncGenerator<JsonValueAt> {
  return jsonValues(createReadStream(path, { highWaterMark: 1 << 16 }), file, select);
}

/**
 * Text handed to the scanner at once, at least: a value held across pushes is one string, copied
 * whole at each push (V8 flattens the concatenation when it is read), so pushing an inflated ZIP
 * entry's 16 kB pieces one by one made reading an 8 MiB value quadratic: 9 s, now 0.4 s.
 */
const PUSHED_CHARS = 1 << 20;

/** The selected values of a JSON document given as UTF-8 bytes, piece by piece. */
export async function* jsonValues(
  bytes: AsyncIterable<Buffer>,
  file: string,
  select: (path: JsonPath) => Selection,
): AsyncGenerator<JsonValueAt> {
  const scanner = new JsonScanner(file, select);
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of bytes) {
    pending += decoder.decode(chunk, { stream: true });
    if (pending.length >= PUSHED_CHARS) {
      yield* scanner.push(pending);
      pending = "";
    }
  }
  pending += decoder.decode();
  if (pending !== "") yield* scanner.push(pending);
  yield* scanner.end();
}

/** `JSON.parse` of a selected value, refused with its file and path when it is not JSON. */
export function parseValue(value: JsonValueAt, file: string): unknown {
  try {
    return JSON.parse(value.raw);
  } catch (error) {
    throw new ExportFormatError(
      file,
      pathText(value.path),
      "entry",
      `not valid JSON${jsonErrorAt(error)}`,
    );
  }
}
