/**
 * The transcript as the scanning stages see it: its UTF-8 bytes (every offset and cap is in bytes)
 * next to the JavaScript string (for the few stages that need text), with the start of every
 * line in both. Only `\n` ends a line, as Rust's `split_inclusive('\n')`: a line keeps its `\n`,
 * the last line may lack one, and an empty text has no lines.
 */
export interface Source {
  readonly text: string;
  readonly bytes: Uint8Array;
  /** `lineStarts[i]` is the byte offset where line `i` begins; the last entry is the byte length. */
  readonly lineStarts: Uint32Array;
  /** `lineTextStarts[i]` is the UTF-16 index where line `i` begins; the last is `text.length`. */
  readonly lineTextStarts: Uint32Array;
}

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const encoder = new TextEncoder();
/** `ignoreBOM` keeps a leading U+FEFF in the output: a segment's content is its exact bytes. */
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * The UTF-8 length of `text` and the UTF-16 index of its first lone surrogate (-1 if none), in
 * one pass. A lone surrogate counts 3 bytes, as in WTF-8, so the size cap can be checked first.
 */
export function measureUtf8(text: string): { byteLength: number; loneSurrogateAt: number } {
  let byteLength = 0;
  let loneSurrogateAt = -1;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) byteLength += 1;
    else if (unit < 0x800) byteLength += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      byteLength += 4;
      i++;
    } else {
      if (unit >= 0xd800 && unit <= 0xdfff && loneSurrogateAt < 0) loneSurrogateAt = i;
      byteLength += 3;
    }
  }
  return { byteLength, loneSurrogateAt };
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** Encodes a well-formed string (no lone surrogate) to UTF-8. */
export function encodeUtf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** The text of `bytes[start, end)`, which must start and end on character boundaries. */
export function decodeUtf8(bytes: Uint8Array, start: number, end: number): string {
  return decoder.decode(bytes.subarray(start, end));
}

/**
 * The line tables of a well-formed `text` and its UTF-8 `bytes`. `\n` is one byte and one UTF-16
 * unit, and the byte 0x0A occurs in no multibyte sequence, so the k-th `\n` of the bytes is the
 * k-th of the string: the string's table is filled by counting its newlines alike.
 */
export function sourceOf(text: string, bytes: Uint8Array): Source {
  const lineStarts = lineStartsOf(bytes, 0, bytes.length);
  const lineTextStarts = new Uint32Array(lineStarts.length);
  let line = 1;
  for (let at = 0; line < lineStarts.length - 1; at++) {
    if (text.charCodeAt(at) === NEWLINE) lineTextStarts[line++] = at + 1;
  }
  lineTextStarts[lineStarts.length - 1] = text.length;
  return { text, bytes, lineStarts, lineTextStarts };
}

/**
 * The start of every line of `bytes[start, end)`, then `end`: a table of `lines + 1` entries
 * (just `[end]` for an empty range). Counting first lets the table be one typed array.
 */
export function lineStartsOf(bytes: Uint8Array, start: number, end: number): Uint32Array {
  let newlines = 0;
  for (let at = start; at < end; at++) if (bytes[at] === NEWLINE) newlines++;
  const lines = end > start && bytes[end - 1] !== NEWLINE ? newlines + 1 : newlines;
  const starts = new Uint32Array(lines + 1);
  let line = 1;
  for (let at = start; line < lines; at++) if (bytes[at] === NEWLINE) starts[line++] = at + 1;
  starts[0] = start;
  starts[lines] = end;
  return starts;
}

/** The end of the line that begins at `start`: just after its `\n`, or `end` without one. */
export function lineEnd(bytes: Uint8Array, start: number, end: number): number {
  for (let at = start; at < end; at++) if (bytes[at] === NEWLINE) return at + 1;
  return end;
}

/**
 * Where `bytes[start, end)` ends once every trailing `\r` and `\n` is stripped (Rust's
 * `trim_end_matches(['\r', '\n'])`): CRLF lines and the final line without a newline compare alike.
 */
export function trimLineBreaks(bytes: Uint8Array, start: number, end: number): number {
  let trimmed = end;
  while (
    trimmed > start &&
    (bytes[trimmed - 1] === NEWLINE || bytes[trimmed - 1] === CARRIAGE_RETURN)
  ) {
    trimmed--;
  }
  return trimmed;
}

/** Whether `bytes[at]` continues a multibyte character, so no cut may fall before it. */
export function isContinuationByte(bytes: Uint8Array, at: number): boolean {
  return (bytes[at] & 0xc0) === 0x80;
}

/**
 * The length in bytes of the whitespace character at `bytes[at]`, or 0. Whitespace is Unicode's
 * White_Space property, which Rust's `trim_start` strips: ASCII tab to carriage return and space,
 * U+0085, U+00A0, U+1680, U+2000 to U+200A, U+2028, U+2029, U+202F, U+205F and U+3000.
 */
export function whitespaceLength(bytes: Uint8Array, at: number, end: number): number {
  const lead = bytes[at];
  if (lead === 0x20 || (lead >= 0x09 && lead <= 0x0d)) return 1;
  const second = at + 1 < end ? bytes[at + 1] : -1;
  if (lead === 0xc2) return second === 0x85 || second === 0xa0 ? 2 : 0;
  if (at + 2 >= end || (lead !== 0xe1 && lead !== 0xe2 && lead !== 0xe3)) return 0;
  const codePoint = ((lead & 0x0f) << 12) | ((second & 0x3f) << 6) | (bytes[at + 2] & 0x3f);
  return isWideWhitespace(codePoint) ? 3 : 0;
}

/** The three-byte White_Space characters. */
function isWideWhitespace(codePoint: number): boolean {
  return (
    codePoint === 0x1680 ||
    (codePoint >= 0x2000 && codePoint <= 0x200a) ||
    codePoint === 0x2028 ||
    codePoint === 0x2029 ||
    codePoint === 0x202f ||
    codePoint === 0x205f ||
    codePoint === 0x3000
  );
}

/** The text of line `line` of the source without its trailing `\r`s and `\n`s. */
export function lineText(source: Source, line: number): string {
  const { bytes, lineStarts, lineTextStarts, text } = source;
  const end = lineStarts[line + 1];
  const stripped = end - trimLineBreaks(bytes, lineStarts[line], end);
  return text.slice(lineTextStarts[line], lineTextStarts[line + 1] - stripped);
}
