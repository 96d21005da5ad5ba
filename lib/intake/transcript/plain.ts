/**
 * Plain-text turns and their sub-segments (`docs/specs/transcript.md` §6, §7): role markers split
 * the text into turns, then each turn into fenced code blocks, runs of log lines and body text.
 * Turns are split first, so a marker line inside a fence still opens a turn.
 */
import { fenceSpans } from "./chunk.js";
import { volatilePrefixLength } from "./log-prefix.js";
import type { RawPiece } from "./piece.js";
import { lineText, type Source, trimLineBreaks } from "./source.js";
import type { SegmentKind } from "./types.js";

/**
 * The closed marker table, in priority order, each with its role: the marker without a leading
 * `"### "` and trailing colons, neither lower-cased nor unified (`Human` stays `Human`). A line
 * opens a turn when its raw bytes start with a marker: case-sensitive, no leading whitespace,
 * nothing required after it (`"User:x"` and `"### Users"` match).
 */
const PLAIN_MARKERS: readonly { marker: string; role: string }[] = [
  { marker: "System:", role: "System" },
  { marker: "User:", role: "User" },
  { marker: "Human:", role: "Human" },
  { marker: "Assistant:", role: "Assistant" },
  { marker: "AI:", role: "AI" },
  { marker: "Tool:", role: "Tool" },
  { marker: "### User", role: "User" },
  { marker: "### Assistant", role: "Assistant" },
];

/** A maximal run of this many log-candidate lines or more becomes a `log` piece. */
const MIN_LOG_RUN_LINES = 8;

/** Lines `[firstLine, endLine)` of the source: one turn, or part of one. */
interface LineRun {
  firstLine: number;
  endLine: number;
}

interface PlainTurn extends LineRun {
  role: string | null;
}

/**
 * The pieces of a plain transcript, in order: per turn, each fenced block a `code` piece and each
 * plain span cut into `body` and `log` pieces.
 */
export function plainPieces(source: Source): RawPiece[] {
  const { bytes, lineStarts } = source;
  const pieces: RawPiece[] = [];
  plainTurns(source).forEach(({ firstLine, endLine, role }, turn) => {
    const push = (kind: SegmentKind, run: LineRun) =>
      pieces.push({
        kind,
        start: lineStarts[run.firstLine],
        end: lineStarts[run.endLine],
        turn,
        role,
      });
    for (const span of fenceSpans(bytes, lineStarts, firstLine, endLine)) {
      if (span.fenced) push("code", span);
      else for (const [kind, run] of logSplit(source, span)) push(kind, run);
    }
  });
  return pieces;
}

/**
 * The turns of the text, partitioning its lines: text before the first marker is a roleless
 * turn, each marker line opens the next turn, and a text without markers is one roleless turn.
 * An empty text has no turn.
 */
function plainTurns(source: Source): PlainTurn[] {
  const lineCount = source.lineStarts.length - 1;
  const turns: PlainTurn[] = [];
  let firstLine = 0;
  let role: string | null = null;
  for (let line = 0; line < lineCount; line++) {
    const marked = markerRole(source, line);
    if (marked === undefined) continue;
    if (line > firstLine) turns.push({ firstLine, endLine: line, role });
    firstLine = line;
    role = marked;
  }
  if (lineCount > firstLine) turns.push({ firstLine, endLine: lineCount, role });
  return turns;
}

/** The first bytes markers begin with: a line starting otherwise is skipped at once. */
const MARKER_INITIALS = new Set(PLAIN_MARKERS.map(({ marker }) => marker.charCodeAt(0)));

/** The role of the first marker line `line` starts with, if any. */
function markerRole(source: Source, line: number): string | undefined {
  const { bytes, lineStarts } = source;
  const start = lineStarts[line];
  const end = lineStarts[line + 1];
  if (!MARKER_INITIALS.has(bytes[start])) return undefined;
  for (const { marker, role } of PLAIN_MARKERS) {
    if (startsWithAscii(bytes, start, end, marker)) return role;
  }
  return undefined;
}

function startsWithAscii(bytes: Uint8Array, start: number, end: number, prefix: string): boolean {
  if (end - start < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) {
    if (bytes[start + i] !== prefix.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * A fence-free span cut into alternating `body` and `log` runs. A line is a log candidate when it
 * is not blank (its line breaks stripped) and either begins with a timestamp or repeats exactly
 * somewhere else in the span; a maximal run of `MIN_LOG_RUN_LINES` candidates or more is a `log`
 * run, and all lines between log runs form one `body` run. A counting pass, then one scan.
 */
function logSplit(source: Source, span: LineRun): [SegmentKind, LineRun][] {
  const candidate = logCandidates(source, span);
  const runs: [SegmentKind, LineRun][] = [];
  let bodyStart = span.firstLine;
  let line = span.firstLine;
  while (line < span.endLine) {
    if (!candidate[line - span.firstLine]) {
      line++;
      continue;
    }
    const runStart = line;
    while (line < span.endLine && candidate[line - span.firstLine]) line++;
    if (line - runStart < MIN_LOG_RUN_LINES) continue;
    if (runStart > bodyStart) runs.push(["body", { firstLine: bodyStart, endLine: runStart }]);
    runs.push(["log", { firstLine: runStart, endLine: line }]);
    bodyStart = line;
  }
  if (span.endLine > bodyStart) {
    runs.push(["body", { firstLine: bodyStart, endLine: span.endLine }]);
  }
  return runs;
}

/**
 * Whether each line of the span is a log candidate. Repeats are counted on the exact text with
 * the line breaks stripped, so `x\r\n` repeats `x\n`; the counts only answer "more than once?",
 * so their order never matters.
 */
function logCandidates(source: Source, { firstLine, endLine }: LineRun): boolean[] {
  const { bytes, lineStarts } = source;
  const texts: (string | undefined)[] = [];
  const counts = new Map<string, number>();
  for (let line = firstLine; line < endLine; line++) {
    const blank =
      trimLineBreaks(bytes, lineStarts[line], lineStarts[line + 1]) === lineStarts[line];
    const text = blank ? undefined : lineText(source, line);
    texts.push(text);
    if (text !== undefined) counts.set(text, (counts.get(text) ?? 0) + 1);
  }
  return texts.map((text, index) => {
    if (text === undefined) return false;
    if ((counts.get(text) ?? 0) > 1) return true;
    const start = lineStarts[firstLine + index];
    const end = trimLineBreaks(bytes, start, lineStarts[firstLine + index + 1]);
    return volatilePrefixLength(bytes, start, end) > 0;
  });
}
