/**
 * From a file's bytes to the text the segmenter reads, refusing what is not text. The segmenter
 * takes a string and keeps the spec's rules (a byte order mark is text there); this step comes
 * before it, for callers that read files: it skips a leading byte order mark, refuses binary data
 * (a known magic number, a NUL byte) and text that is not UTF-8 (UTF-16 or UTF-32, with or
 * without a byte order mark; Latin-1 and other single-byte encodings, by the first byte that is
 * no UTF-8) unless an encoding is named, and counts the line ends, bare CRs included. Pure: no
 * I/O, and no heuristics beyond those named here.
 */
import { TranscriptEncodingError } from "./errors.js";
import type { SegmentationOutcome } from "./types.js";

/** The encodings a transcript file may be decoded from when the caller names one. */
export const TRANSCRIPT_ENCODINGS = [
  "utf-8",
  "utf-16le",
  "utf-16be",
  "latin1",
  "windows-1252",
] as const;
export type TranscriptEncoding = (typeof TRANSCRIPT_ENCODINGS)[number];

export interface DecodedTranscript {
  /** The text, without its leading byte order mark. */
  text: string;
  encoding: TranscriptEncoding;
  /** The leading byte order mark that was skipped, or null. */
  bom: "utf-8" | "utf-16le" | "utf-16be" | null;
  /** The file's size in bytes. */
  bytes: number;
  /** Line ends in the text: `\n` alone, `\r\n`, and runs of `\r` that no `\n` follows. */
  lineEnds: { lf: number; crlf: number; bareCr: number };
  /** The 1-based line (only `\n` ends one) that holds the first bare CR, or null. */
  firstBareCrLine: number | null;
}

/** File signatures that no transcript starts with, and what each is. */
const MAGIC_NUMBERS: readonly { bytes: readonly number[]; what: string }[] = [
  { bytes: [0x7f, 0x45, 0x4c, 0x46], what: "an ELF executable" },
  { bytes: [0xcf, 0xfa, 0xed, 0xfe], what: "a Mach-O executable" },
  { bytes: [0xce, 0xfa, 0xed, 0xfe], what: "a Mach-O executable" },
  { bytes: [0xfe, 0xed, 0xfa, 0xcf], what: "a Mach-O executable" },
  { bytes: [0xfe, 0xed, 0xfa, 0xce], what: "a Mach-O executable" },
  { bytes: [0xca, 0xfe, 0xba, 0xbe], what: "a Mach-O universal binary or Java class file" },
  { bytes: [0x00, 0x61, 0x73, 0x6d], what: "a WebAssembly module" },
  { bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], what: "a PNG image" },
  { bytes: [0xff, 0xd8, 0xff], what: "a JPEG image" },
  { bytes: [...new TextEncoder().encode("GIF87a")], what: "a GIF image" },
  { bytes: [...new TextEncoder().encode("GIF89a")], what: "a GIF image" },
  { bytes: [0x25, 0x50, 0x44, 0x46, 0x2d], what: "a PDF document" },
  { bytes: [0x50, 0x4b, 0x03, 0x04], what: "a ZIP archive" },
  { bytes: [0x1f, 0x8b], what: "a gzip archive" },
  { bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], what: "an xz archive" },
  { bytes: [0x28, 0xb5, 0x2f, 0xfd], what: "a Zstandard archive" },
  {
    bytes: [...new TextEncoder().encode("SQLite format 3"), 0x00],
    what: "an SQLite database",
  },
];
const UTF8_BOM = [0xef, 0xbb, 0xbf];
const UTF16LE_BOM = [0xff, 0xfe];
const UTF16BE_BOM = [0xfe, 0xff];
/** How many leading bytes the UTF-16 guess looks at. */
const SAMPLE_BYTES = 4096;

/**
 * The text of a transcript file's `bytes`. Without `encoding`, the bytes must be UTF-8 (a
 * leading UTF-8 byte order mark is skipped); with one, they are decoded from it (a matching
 * byte order mark skipped). Either way the result has no NUL character.
 *
 * @throws TranscriptEncodingError naming what was found (`found`), where (`offset`, a byte of
 *   the file, and `line` when lines can be counted), and which encoding would read it
 *   (`suggested`), for binary data, UTF-16 or UTF-32 text, and bytes that are no text in the
 *   encoding.
 */
export function decodeTranscript(
  bytes: Uint8Array,
  encoding?: TranscriptEncoding,
): DecodedTranscript {
  for (const { bytes: magic, what } of MAGIC_NUMBERS) {
    if (startsWith(bytes, magic)) {
      const hex = magic.slice(0, 4).map(hexByte).join(" ");
      throw new TranscriptEncodingError(`${what} (it starts with the bytes ${hex})`, what, {
        offset: 0,
        binary: true,
      });
    }
  }
  const decoded = encoding === undefined ? detect(bytes) : decodeAs(bytes, encoding);
  const nul = decoded.text.indexOf("\u0000");
  if (nul >= 0) {
    // Only a NUL the named encoding decoded is left here; its byte follows from its index.
    const wide = decoded.encoding === "utf-16le" || decoded.encoding === "utf-16be";
    const offset =
      decoded.encoding === "utf-8"
        ? bytes.indexOf(0)
        : wide
          ? nul * 2 + (decoded.bom === null ? 0 : 2)
          : nul;
    let line = 1;
    for (let at = 0; at < nul; at++) if (decoded.text.charCodeAt(at) === 0x0a) line++;
    throw binary("a NUL character", offset, line);
  }
  return { ...decoded, bytes: bytes.length, ...lineEndsOf(decoded.text) };
}

type Decoded = Pick<DecodedTranscript, "text" | "encoding" | "bom">;

/** UTF-8, or a refusal saying what the bytes look like instead. */
function detect(bytes: Uint8Array): Decoded {
  if (startsWith(bytes, [0xff, 0xfe, 0x00, 0x00]) || startsWith(bytes, [0x00, 0x00, 0xfe, 0xff])) {
    const order = bytes[0] === 0xff ? "LE" : "BE";
    const found = `UTF-32${order} text`;
    throw new TranscriptEncodingError(
      `${found} (a UTF-32 byte order mark), which is not read here: convert it to UTF-8`,
      found,
      { offset: 0 },
    );
  }
  for (const [bom, encoding] of [
    [UTF16LE_BOM, "utf-16le"],
    [UTF16BE_BOM, "utf-16be"],
  ] as const) {
    if (startsWith(bytes, bom)) {
      const found = `${encoding.toUpperCase()} text`;
      throw new TranscriptEncodingError(
        `${found} (it starts with the byte order mark ${bom.map(hexByte).join(" ")})`,
        found,
        { offset: 0, suggested: encoding },
      );
    }
  }
  const nul = bytes.indexOf(0);
  if (nul >= 0) {
    const utf16 = utf16WithoutBom(bytes);
    if (utf16 !== undefined) {
      const found = `${utf16.toUpperCase()} text without a byte order mark`;
      throw new TranscriptEncodingError(
        `${found} (NUL bytes at ${utf16 === "utf-16le" ? "odd" : "even"} offsets, beside ASCII)`,
        found,
        { offset: nul, suggested: utf16 },
      );
    }
    throw binary("a NUL byte", nul, lineAt(bytes, nul));
  }
  return decodeUtf8Strict(bytes);
}

/** The bytes decoded from a named encoding, a matching byte order mark skipped. */
function decodeAs(bytes: Uint8Array, encoding: TranscriptEncoding): Decoded {
  if (encoding === "utf-8") return decodeUtf8Strict(bytes);
  if (encoding === "latin1" || encoding === "windows-1252") {
    return { text: singleByteText(bytes, encoding), encoding, bom: null };
  }
  const own = encoding === "utf-16le" ? UTF16LE_BOM : UTF16BE_BOM;
  const other = encoding === "utf-16le" ? UTF16BE_BOM : UTF16LE_BOM;
  if (startsWith(bytes, other)) {
    const says = encoding === "utf-16le" ? "utf-16be" : "utf-16le";
    throw new TranscriptEncodingError(
      `the byte order mark ${other.map(hexByte).join(" ")} of ${says.toUpperCase()}, not ${encoding}`,
      `${says.toUpperCase()} text`,
      { offset: 0, suggested: says },
    );
  }
  const start = startsWith(bytes, own) ? 2 : 0;
  if ((bytes.length - start) % 2 !== 0) {
    throw new TranscriptEncodingError(
      `an odd number of bytes (${bytes.length}), which ${encoding} text never has`,
      `not ${encoding} text`,
      { offset: bytes.length - 1 },
    );
  }
  const little = encoding === "utf-16le";
  for (let at = start; at < bytes.length; at += 2) {
    const unit = little ? bytes[at] | (bytes[at + 1] << 8) : (bytes[at] << 8) | bytes[at + 1];
    if (unit < 0xd800 || unit > 0xdfff) continue;
    const next =
      at + 3 < bytes.length
        ? little
          ? bytes[at + 2] | (bytes[at + 3] << 8)
          : (bytes[at + 2] << 8) | bytes[at + 3]
        : -1;
    if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      at += 2;
      continue;
    }
    throw new TranscriptEncodingError(
      `an unpaired surrogate ${hexUnit(unit)} at byte ${at}, which ${encoding} text never has`,
      `not ${encoding} text`,
      { offset: at },
    );
  }
  const text = new TextDecoder(encoding, { ignoreBOM: true }).decode(bytes.subarray(start));
  return { text, encoding, bom: start > 0 ? encoding : null };
}

/**
 * Windows-1252's characters for the bytes 0x80 to 0x9F, where Latin-1 has C1 controls; the five
 * bytes it leaves undefined keep their Latin-1 meaning, as WHATWG's decoder does. (Node 20's
 * `TextDecoder("windows-1252")` decodes Latin-1, so the table is applied here.)
 */
const WINDOWS_1252_HIGH =
  "\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f" +
  "\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178";

/** Every byte as one character: Latin-1's code points, or Windows-1252's. */
function singleByteText(bytes: Uint8Array, encoding: "latin1" | "windows-1252"): string {
  let text = "";
  for (let at = 0; at < bytes.length; at += 8192) {
    const chunk = bytes.subarray(at, at + 8192);
    text +=
      encoding === "latin1"
        ? String.fromCharCode(...chunk)
        : Array.from(chunk, (byte) =>
            byte >= 0x80 && byte <= 0x9f
              ? WINDOWS_1252_HIGH[byte - 0x80]
              : String.fromCharCode(byte),
          ).join("");
  }
  return text;
}

/** UTF-8 text, a leading byte order mark skipped; the first byte that is no UTF-8 refused. */
function decodeUtf8Strict(bytes: Uint8Array): Decoded {
  const start = startsWith(bytes, UTF8_BOM) ? 3 : 0;
  try {
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(
      bytes.subarray(start),
    );
    return { text, encoding: "utf-8", bom: start > 0 ? "utf-8" : null };
  } catch {
    throw notUtf8(bytes, invalidUtf8At(bytes, start));
  }
}

/**
 * Where the first byte that starts no well-formed UTF-8 sequence is (RFC 3629: no overlong
 * form, no surrogate, nothing above U+10FFFF), and whether the file ends inside a sequence.
 */
function invalidUtf8At(bytes: Uint8Array, start: number): { offset: number; truncated: boolean } {
  let at = start;
  while (at < bytes.length) {
    const lead = bytes[at];
    if (lead < 0x80) {
      at++;
      continue;
    }
    const length = lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : 4;
    if (lead < 0xc2 || lead > 0xf4) return { offset: at, truncated: false };
    // The second byte's range depends on the lead (overlongs, surrogates, the U+10FFFF cap).
    const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    for (let i = 1; i < length; i++) {
      if (at + i >= bytes.length) return { offset: at, truncated: true };
      const byte = bytes[at + i];
      const ok = i === 1 ? byte >= low && byte <= high : byte >= 0x80 && byte <= 0xbf;
      if (!ok) return { offset: at, truncated: false };
    }
    at += length;
  }
  return { offset: bytes.length, truncated: true };
}

/**
 * The refusal of bytes that are no UTF-8. After well-formed multibyte UTF-8, the file is UTF-8
 * gone wrong: cut inside a character at its end, or damaged. Before any, it is binary data
 * (control bytes) or, most likely, single-byte text.
 */
function notUtf8(
  bytes: Uint8Array,
  { offset, truncated }: { offset: number; truncated: boolean },
): TranscriptEncodingError {
  const line = lineAt(bytes, offset);
  const where = `byte ${offset} (line ${line})`;
  const afterUtf8 = bytes.subarray(0, offset).some((byte) => byte >= 0x80);
  if (afterUtf8 && truncated) {
    return new TranscriptEncodingError(
      `the file ends inside a UTF-8 character at ${where}: it looks cut short`,
      "a truncated UTF-8 character",
      { offset, line },
    );
  }
  if (afterUtf8) {
    return new TranscriptEncodingError(
      `the byte ${hexByte(bytes[offset])} at ${where} starts no UTF-8 character, after UTF-8 text: the file is damaged or mixes encodings`,
      "invalid UTF-8",
      { offset, line },
    );
  }
  if (controlShare(bytes) > 0.01) return binary("bytes that are no UTF-8", offset, line);
  const windows = bytes.some((byte) => byte >= 0x80 && byte <= 0x9f);
  const suggested = windows ? "windows-1252" : "latin1";
  const found = windows ? "Windows-1252 text" : "Latin-1 text";
  const orCut = truncated ? " (or UTF-8 cut short)" : "";
  return new TranscriptEncodingError(
    `the byte ${hexByte(bytes[offset])} at ${where} starts no UTF-8 character; it looks like ${found}${orCut}`,
    found,
    { offset, line, suggested },
  );
}

function binary(what: string, offset: number, line: number): TranscriptEncodingError {
  return new TranscriptEncodingError(
    `binary data: ${what} at byte ${offset} (line ${line}), which no transcript holds`,
    "binary data",
    { offset, line, binary: true },
  );
}

/**
 * `utf-16le` or `utf-16be` when the sample's NUL bytes sit at odd (or even) offsets only, as
 * in UTF-16 text that is mostly ASCII; undefined otherwise.
 */
function utf16WithoutBom(bytes: Uint8Array): "utf-16le" | "utf-16be" | undefined {
  const pairs = Math.floor(Math.min(bytes.length, SAMPLE_BYTES) / 2);
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < pairs; i++) {
    if (bytes[2 * i] === 0) evenZeros++;
    if (bytes[2 * i + 1] === 0) oddZeros++;
  }
  if (oddZeros >= pairs / 4 && evenZeros * 16 <= oddZeros) return "utf-16le";
  if (evenZeros >= pairs / 4 && oddZeros * 16 <= evenZeros) return "utf-16be";
  return undefined;
}

/** The share of C0 control bytes other than tab, line ends, form feed, backspace and escape. */
function controlShare(bytes: Uint8Array): number {
  const sample = Math.min(bytes.length, SAMPLE_BYTES);
  let controls = 0;
  for (let i = 0; i < sample; i++) {
    const byte = bytes[i];
    if (byte < 0x20 && ![0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1b].includes(byte)) controls++;
  }
  return sample === 0 ? 0 : controls / sample;
}

function lineEndsOf(text: string): Pick<DecodedTranscript, "lineEnds" | "firstBareCrLine"> {
  const lineEnds = { lf: 0, crlf: 0, bareCr: 0 };
  let firstBareCrLine: number | null = null;
  for (let at = 0; at < text.length; at++) {
    const char = text[at];
    if (char === "\n") {
      if (at > 0 && text[at - 1] === "\r") lineEnds.crlf++;
      else lineEnds.lf++;
    } else if (char === "\r") {
      let end = at;
      while (text[end + 1] === "\r") end++;
      if (text[end + 1] !== "\n") {
        lineEnds.bareCr++;
        firstBareCrLine ??= lineEnds.lf + lineEnds.crlf + 1;
      }
      at = end;
    }
  }
  return { lineEnds, firstBareCrLine };
}

/**
 * The outcome with its byte ranges counted in the file's bytes: after the skipped byte order
 * mark, and through the encoding when it is not UTF-8 (each character then counts the bytes it
 * took in the file). Ranges stay half-open and in order; contents are unchanged.
 */
export function inFileBytes(
  outcome: SegmentationOutcome,
  decoded: DecodedTranscript,
): SegmentationOutcome {
  const bomBytes = decoded.bom === null ? 0 : decoded.bom === "utf-8" ? 3 : 2;
  if (decoded.encoding === "utf-8") {
    if (bomBytes === 0) return outcome;
    const segments = outcome.segments.map((segment) => ({
      ...segment,
      byteStart: segment.byteStart + bomBytes,
      byteEnd: segment.byteEnd + bomBytes,
    }));
    return { ...outcome, segments };
  }
  const { text, encoding } = decoded;
  const wide = encoding === "utf-16le" || encoding === "utf-16be";
  let at = 0;
  let utf8 = 0;
  let file = bomBytes;
  /** The file offset of a UTF-8 offset of the text; offsets must come in ascending order. */
  const map = (offset: number): number => {
    while (utf8 < offset && at < text.length) {
      const code = text.codePointAt(at) ?? 0;
      const units = code > 0xffff ? 2 : 1;
      const utf8Width = code < 0x80 ? 1 : code < 0x800 ? 2 : code <= 0xffff ? 3 : 4;
      utf8 += utf8Width;
      file += wide ? units * 2 : 1;
      at += units;
    }
    return file;
  };
  const segments = outcome.segments.map((segment) => ({
    ...segment,
    byteStart: map(segment.byteStart),
    byteEnd: map(segment.byteEnd),
  }));
  return { ...outcome, segments };
}

/** The 1-based line holding byte `offset`: one more than the `\n` bytes before it. */
function lineAt(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let at = 0; at < offset && at < bytes.length; at++) if (bytes[at] === 0x0a) line++;
  return line;
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  if (bytes.length < prefix.length) return false;
  return prefix.every((byte, i) => bytes[i] === byte);
}

function hexByte(byte: number): string {
  return byte.toString(16).toUpperCase().padStart(2, "0");
}

function hexUnit(unit: number): string {
  return `U+${unit.toString(16).toUpperCase().padStart(4, "0")}`;
}
