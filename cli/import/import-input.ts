/**
 * What `import` says about its input. The segmenter keeps the spec's rules (an `auto` text that
 * is not JSONL is read as plain text without a word); the command reports: a file refused as
 * binary data or another encoding (with the flag or conversion that would read it), a file of
 * only whitespace, every bad line of a forced-JSONL file, and beside a successful segmentation
 * the input report: the byte order mark skipped, the encoding decoded, bare CR line ends, and a
 * file that looks like JSONL but was read as plain text, with its first bad line.
 */
import { readFile } from "node:fs/promises";
import {
  checkJsonl,
  type DecodedTranscript,
  type JsonlLineProblem,
  SegmentationError,
  type SegmentationOutcome,
  type SegmentFormat,
  TRANSCRIPT_ENCODINGS,
  type TranscriptEncoding,
  TranscriptEncodingError,
} from "convoseg/transcript";
import { escapeControls, formatCount, plural } from "../shared/format.js";
import type { CommandIO } from "../shared/io.js";

/** The `input` object of `--json`: what was read, and the warnings the table prints. */
export interface InputReport {
  /** The file's size. */
  bytes: number;
  encoding: TranscriptEncoding;
  /** The leading byte order mark skipped, or null. */
  bom: "utf-8" | "utf-16le" | "utf-16be" | null;
  lineEnds: { lf: number; crlf: number; bareCr: number };
  /** The 1-based line holding the first bare CR, or null. */
  firstBareCrLine: number | null;
  /** Set when `auto` read a file that looks like JSONL as plain text. */
  fallback: {
    /** The first malformed line, or null when no line is malformed but none is a message. */
    line: number | null;
    reason: string;
    /** How many lines are malformed, and how many lines the file has. */
    badLines: number;
    lines: number;
  } | null;
  /** One sentence per finding, as the table prints them after `warning: `. */
  warnings: string[];
}

/** The names `--encoding` takes (any case; `utf8` is `utf-8`). */
export function parseEncoding(value: string): TranscriptEncoding {
  const name = value.toLowerCase() === "utf8" ? "utf-8" : value.toLowerCase();
  const known = TRANSCRIPT_ENCODINGS.find((encoding) => encoding === name);
  if (known === undefined) {
    throw new Error(
      `--encoding must be one of ${TRANSCRIPT_ENCODINGS.join(", ")} (got ${JSON.stringify(value)})`,
    );
  }
  return known;
}

/** The file's bytes, or standard input's for `-`. */
export async function readBytes(source: string, io: CommandIO): Promise<Uint8Array> {
  if (source !== "-") return readFile(source);
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** How a message names the input: the path, or standard input. */
function inputName(source: string): string {
  return source === "-" ? "standard input" : escapeControls(source);
}

/** Each encoding's name for a person, and `iconv`'s, for the advice a refusal gives. */
const ENCODING_NAMES: Record<TranscriptEncoding, { shown: string; iconv: string }> = {
  "utf-8": { shown: "UTF-8", iconv: "UTF-8" },
  "utf-16le": { shown: "UTF-16LE", iconv: "UTF-16LE" },
  "utf-16be": { shown: "UTF-16BE", iconv: "UTF-16BE" },
  latin1: { shown: "Latin-1", iconv: "LATIN1" },
  "windows-1252": { shown: "Windows-1252", iconv: "WINDOWS-1252" },
};

/** The stderr lines for input that could not be read or decoded (exit 1). */
export function readFailure(
  source: string,
  error: unknown,
  encoding: TranscriptEncoding | undefined,
): string {
  const name = inputName(source);
  if (!(error instanceof TranscriptEncodingError)) {
    return `import: cannot read ${name}: ${escapeControls((error as Error).message)}\n`;
  }
  const what = error.binary
    ? "is not text"
    : encoding === undefined
      ? "is not UTF-8"
      : `cannot be read as ${encoding}`;
  return `import: ${name} ${what}: ${error.message}; nothing was written.\n${refusalAdvice(error, encoding)}\n`;
}

function refusalAdvice(
  error: TranscriptEncodingError,
  encoding: TranscriptEncoding | undefined,
): string {
  if (error.suggested !== undefined) {
    const { shown, iconv } = ENCODING_NAMES[error.suggested];
    return `If it is ${shown} text, pass --encoding ${error.suggested}, or convert it first: iconv -f ${iconv} -t UTF-8 FILE > FILE.utf8`;
  }
  if (error.binary) return "Import a transcript: plain text or JSONL, in UTF-8.";
  if (encoding !== undefined) {
    return `Check --encoding ${encoding}: the file is not in it (${TRANSCRIPT_ENCODINGS.join(", ")} can be read).`;
  }
  if (error.found.startsWith("UTF-32")) {
    return "Convert it to UTF-8 first: iconv -f UTF-32 -t UTF-8 FILE > FILE.utf8";
  }
  if (error.found === "a truncated UTF-8 character") {
    return "Check that the file was copied whole; --encoding latin1 would read every byte as a character.";
  }
  return "Repair the file, or pass --encoding latin1 to read every byte as a character.";
}

/** The stderr line for a file with nothing to import (exit 1), or undefined when it has text. */
export function nothingToImport(source: string, decoded: DecodedTranscript): string | undefined {
  if (decoded.text.trim() !== "") return undefined;
  const name = inputName(source);
  const what =
    decoded.bytes === 0 ? "it is empty" : `only whitespace (${formatCount(decoded.bytes)} bytes)`;
  return `import: ${name} holds no transcript: ${what}; nothing to import, nothing was written\n`;
}

/**
 * The stderr lines for a segmentation failure (exit 1). A malformed line under forced JSONL is
 * followed by every bad line of the file, each with its reason, and what to do.
 */
export function segmentationFailure(error: unknown, text: string): string {
  const first = `import: ${escapeControls((error as Error).message)} (nothing was written)\n`;
  if (!(error instanceof SegmentationError) || error.line === undefined) return first;
  const check = checkJsonl(text);
  const listed = check.problems.map(
    (problem) => `  line ${problem.line}: ${escapeControls(withHint(text, problem))}`,
  );
  return `${first}import: ${formatCount(check.problems.length)} of ${plural(check.lines, "line")} ${check.problems.length === 1 ? "is" : "are"} not JSONL:\n${listed.join("\n")}\nFix or remove those lines, or import with --format auto (a file that is not JSONL is then read as plain text).\n`;
}

/** The input report of a segmented text (see {@link InputReport}). */
export function inputReport(
  decoded: DecodedTranscript,
  outcome: SegmentationOutcome,
  format: SegmentFormat,
): InputReport {
  const warnings: string[] = [];
  const skippedBom =
    decoded.bom === null ? "" : `its ${decoded.bom.toUpperCase()} byte order mark skipped`;
  if (decoded.encoding !== "utf-8") {
    const skipped = skippedBom === "" ? "" : `, ${skippedBom}`;
    warnings.push(
      `decoded from ${decoded.encoding}${skipped} (byte ranges count the file's bytes)`,
    );
  } else if (skippedBom !== "") {
    warnings.push(`read as UTF-8, ${skippedBom} (byte ranges count the file's bytes)`);
  }
  if (decoded.firstBareCrLine !== null) {
    warnings.push(
      `${plural(decoded.lineEnds.bareCr, "line end")} ${decoded.lineEnds.bareCr === 1 ? "is" : "are"} a bare CR (\\r without \\n), the first on line ${decoded.firstBareCrLine}: only \\n ends a line here, so those lines run together; convert them first (tr '\\r' '\\n')`,
    );
  }
  const fallback = fallbackOf(decoded.text, outcome, format);
  if (fallback !== null) {
    const where =
      fallback.line === null
        ? fallback.reason
        : `line ${fallback.line} of ${formatCount(fallback.lines)} is not a JSONL message: ${fallback.reason}; ${plural(fallback.badLines, "bad line")} in all (--format jsonl lists every one)`;
    warnings.push(`read as plain text, not JSONL: ${where}`);
  }
  const { bytes, encoding, bom, lineEnds, firstBareCrLine } = decoded;
  return { bytes, encoding, bom, lineEnds, firstBareCrLine, fallback, warnings };
}

/** The report's warnings as table lines, `warning: …` each. */
export function warningLines(input: InputReport): string[] {
  return input.warnings.map((warning) => `warning: ${escapeControls(warning)}`);
}

/**
 * Why `auto` read a text that looks like JSONL (at least half of its non-blank lines start with
 * `{`, after whitespace or a byte order mark) as plain text: its first malformed line, or that no
 * line is a message. Null for a text read as JSONL, a forced format, or a text that does not
 * look like JSONL.
 */
function fallbackOf(
  text: string,
  outcome: SegmentationOutcome,
  format: SegmentFormat,
): InputReport["fallback"] {
  if (format !== "auto" || outcome.formatDetected !== "plain" || !looksLikeJsonl(text)) {
    return null;
  }
  const check = checkJsonl(text);
  const first = check.problems[0];
  const badLines = check.problems.length;
  if (first === undefined) {
    const reason =
      "no line is a message: none has a role (nor a message or payload with one); chat lines, such as {id, ts, user, text}, are read by `run --input`, not `import`";
    return { line: null, reason, badLines, lines: check.lines };
  }
  return { line: first.line, reason: withHint(text, first), badLines, lines: check.lines };
}

function looksLikeJsonl(text: string): boolean {
  let nonBlank = 0;
  let objects = 0;
  for (const line of text.split("\n")) {
    const trimmed = line.trimStart();
    if (trimmed === "" || trimmed === "\r") continue;
    nonBlank++;
    if (trimmed.startsWith("{")) objects++;
  }
  return nonBlank > 0 && objects * 2 >= nonBlank;
}

/** A malformed line's reason, with what it likely means when the line shows it. */
function withHint(text: string, { line, reason }: JsonlLineProblem): string {
  const { content, last } = lineOf(text, line);
  if (content.startsWith("\ufeff")) {
    return `${reason} (the line starts with a byte order mark, U+FEFF: files joined together?)`;
  }
  if (content.trim() === "") return `${reason} (a line of only whitespace is not blank in JSONL)`;
  if (reason.startsWith("recursion limit exceeded")) {
    return `${reason} (JSON nested deeper than 128 levels)`;
  }
  let end = content.length;
  while (end > 0 && content[end - 1] === "\r") end--;
  if (content.slice(0, end).includes("\r")) {
    return `${reason} (the line holds bare CRs: lines that end in \\r alone run together)`;
  }
  if (reason.startsWith("unexpected end of input")) {
    const why = last ? "the file looks cut short" : "a line cut short or split in two";
    return `${reason} (the line ends before its JSON does: ${why})`;
  }
  return reason;
}

/**
 * Line `line` (1-based; only `\n` ends one) of `text` without its `\n`, and whether it is the
 * last line and has none.
 */
function lineOf(text: string, line: number): { content: string; last: boolean } {
  let start = 0;
  for (let n = 1; n < line; n++) {
    const next = text.indexOf("\n", start);
    if (next < 0) return { content: "", last: true };
    start = next + 1;
  }
  const end = text.indexOf("\n", start);
  return { content: text.slice(start, end < 0 ? text.length : end), last: end < 0 };
}
