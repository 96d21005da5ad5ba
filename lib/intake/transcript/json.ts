/**
 * A strict JSON parser (RFC 8259) for one JSONL line, hand-written rather than `JSON.parse` so
 * that a repeated key can be told apart (the original rejects a repeated `role` or `content`),
 * a `\u` escape of a lone surrogate is refused (it has no UTF-8 form, and the original refuses it
 * too), nesting is bounded (128 levels, serde_json's limit, so a line of `[[[[…` cannot exhaust
 * the stack), and error reasons are the same on every Node version. Columns in reasons are
 * 1-based UTF-16 positions in the line.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

/** An object's members (the last of a repeated key wins) and the keys that were repeated. */
export class JsonObject {
  readonly fields = new Map<string, JsonValue>();
  readonly repeatedKeys = new Set<string>();
}

/** Why a line is not an accepted JSONL line; the caller adds the line number. */
export class MalformedLineError extends Error {
  override readonly name: string = "MalformedLineError";
}

const MAX_DEPTH = 128;
/** The character each two-character escape stands for (`\\u` is read apart). */
const ESCAPES = new Map([
  ['"', '"'],
  ["\\", "\\"],
  ["/", "/"],
  ["b", "\b"],
  ["f", "\f"],
  ["n", "\n"],
  ["r", "\r"],
  ["t", "\t"],
]);

/** The value `text` holds, with nothing but JSON whitespace around it. */
export function parseJson(text: string): JsonValue {
  const reader = new JsonReader(text);
  const value = reader.value(0);
  reader.skipWhitespace();
  if (reader.at < text.length) throw reader.error("trailing characters");
  return value;
}

/** A cursor over the line; each method consumes what it reads. */
class JsonReader {
  at = 0;

  constructor(private readonly text: string) {}

  value(depth: number): JsonValue {
    this.skipWhitespace();
    if (this.at >= this.text.length) throw this.error("unexpected end of input");
    const char = this.text[this.at];
    if (char === "{" || char === "[") {
      if (depth >= MAX_DEPTH) throw this.error("recursion limit exceeded");
      return char === "{" ? this.object(depth + 1) : this.array(depth + 1);
    }
    if (char === '"') return this.string();
    if (char === "-" || isDigit(this.text.charCodeAt(this.at))) return this.number();
    if (this.text.startsWith("true", this.at)) return this.literal(4, true);
    if (this.text.startsWith("false", this.at)) return this.literal(5, false);
    if (this.text.startsWith("null", this.at)) return this.literal(4, null);
    throw this.error("expected value");
  }

  skipWhitespace(): void {
    for (; this.at < this.text.length; this.at++) {
      const char = this.text[this.at];
      if (char !== " " && char !== "\t" && char !== "\n" && char !== "\r") return;
    }
  }

  /** The error `reason` at `at` (by default the cursor), as a 1-based column. */
  error(reason: string, at = this.at): MalformedLineError {
    return new MalformedLineError(`${reason} at column ${at + 1}`);
  }

  private object(depth: number): JsonObject {
    const object = new JsonObject();
    this.at++;
    if (this.closes("}")) return object;
    do {
      this.skipWhitespace();
      if (this.text[this.at] !== '"') throw this.error("expected a string key");
      const key = this.string();
      this.skipWhitespace();
      if (this.text[this.at] !== ":") throw this.error("expected ':'");
      this.at++;
      if (object.fields.has(key)) object.repeatedKeys.add(key);
      object.fields.set(key, this.value(depth));
    } while (this.separates("}"));
    return object;
  }

  private array(depth: number): JsonValue[] {
    const items: JsonValue[] = [];
    this.at++;
    if (this.closes("]")) return items;
    do items.push(this.value(depth));
    while (this.separates("]"));
    return items;
  }

  /** Consumes `close` right after an opening bracket (an empty container) if it is there. */
  private closes(close: string): boolean {
    this.skipWhitespace();
    if (this.text[this.at] !== close) return false;
    this.at++;
    return true;
  }

  /** After a member: true for `,` (another follows), false for `close`, else an error. */
  private separates(close: string): boolean {
    this.skipWhitespace();
    const char = this.text[this.at];
    this.at++;
    if (char === ",") return true;
    if (char === close) return false;
    this.at--;
    throw this.error(
      this.at >= this.text.length ? "unexpected end of input" : `expected ',' or '${close}'`,
    );
  }

  /** A string: raw runs are sliced whole; control characters must be escaped. */
  private string(): string {
    let decoded = "";
    let runStart = ++this.at;
    for (; this.at < this.text.length; this.at++) {
      const unit = this.text.charCodeAt(this.at);
      if (unit === 0x22) {
        decoded += this.text.slice(runStart, this.at++);
        return decoded;
      }
      if (unit < 0x20) throw this.error("control character in string");
      if (unit !== 0x5c) continue;
      decoded += this.text.slice(runStart, this.at);
      decoded += this.escape();
      runStart = this.at + 1;
    }
    throw this.error("unexpected end of input");
  }

  /** The escape whose backslash is at `at`; leaves `at` on its last character. */
  private escape(): string {
    const letter = this.text[++this.at];
    if (letter === "u") return this.unicodeEscape();
    if (letter === undefined) throw this.error("unexpected end of input");
    const replacement = ESCAPES.get(letter);
    if (replacement === undefined) throw this.error("invalid escape");
    return replacement;
  }

  /**
   * `\uXXXX`, or a surrogate pair of two; a lone surrogate has no UTF-8 form and is refused,
   * named at its backslash.
   */
  private unicodeEscape(): string {
    const backslash = this.at - 1;
    const unit = this.hex4();
    if (unit < 0xd800 || unit > 0xdfff) return String.fromCharCode(unit);
    const paired =
      unit <= 0xdbff && this.text[this.at + 1] === "\\" && this.text[this.at + 2] === "u";
    if (!paired) throw this.error("lone surrogate in \\u escape", backslash);
    this.at += 2;
    const low = this.hex4();
    if (low < 0xdc00 || low > 0xdfff) throw this.error("lone surrogate in \\u escape", backslash);
    return String.fromCharCode(unit, low);
  }

  /** Four hex digits after `at`; leaves `at` on the last. */
  private hex4(): number {
    let unit = 0;
    for (let i = 0; i < 4; i++) {
      const digit = hexValue(this.text.charCodeAt(++this.at));
      if (digit < 0) throw this.error("invalid \\u escape");
      unit = unit * 16 + digit;
    }
    return unit;
  }

  /** `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, checked by hand. */
  private number(): number {
    const start = this.at;
    if (this.text[this.at] === "-") this.at++;
    if (this.text[this.at] === "0") this.at++;
    else if (!this.digits()) throw this.error("invalid number");
    if (this.text[this.at] === ".") {
      this.at++;
      if (!this.digits()) throw this.error("invalid number");
    }
    const exponent = this.text[this.at];
    if (exponent === "e" || exponent === "E") {
      this.at++;
      if (this.text[this.at] === "+" || this.text[this.at] === "-") this.at++;
      if (!this.digits()) throw this.error("invalid number");
    }
    return Number(this.text.slice(start, this.at));
  }

  /** Consumes a run of ASCII digits; whether there was one. */
  private digits(): boolean {
    const start = this.at;
    while (isDigit(this.text.charCodeAt(this.at))) this.at++;
    return this.at > start;
  }

  private literal<T>(length: number, value: T): T {
    this.at += length;
    return value;
  }
}

function isDigit(unit: number): boolean {
  return unit >= 0x30 && unit <= 0x39;
}

function hexValue(unit: number): number {
  if (isDigit(unit)) return unit - 0x30;
  if (unit >= 0x41 && unit <= 0x46) return unit - 0x37;
  if (unit >= 0x61 && unit <= 0x66) return unit - 0x57;
  return -1;
}
