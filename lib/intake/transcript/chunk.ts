/**
 * Fences and the byte chunker (`docs/specs/transcript.md` §7a, §9a; the original's `chunk.rs`):
 * fenced code blocks are found line by line and kept whole, the rest is cut after blank-line runs
 * and packed greedily, and a paragraph over the ceiling is hard-split on character boundaries.
 * Only the paragraph boundary with no overlap is ported, the one segmentation uses. Every cut lies
 * inside the range handed in, so the chunks partition it exactly.
 */
import { isContinuationByte, lineStartsOf, whitespaceLength } from "./source.js";

/** A half-open range of byte offsets. */
export interface ByteRange {
  start: number;
  end: number;
}

/** A run of whole lines: a fenced block (fence lines included), or plain text between fences. */
export interface FenceSpan {
  fenced: boolean;
  firstLine: number;
  endLine: number;
}

const BACKTICK = 0x60;
const NEWLINE = 0x0a;

/**
 * Lines `[firstLine, endLine)` of `bytes` (as `lineStarts` delimits them) split into fenced and
 * plain spans. Every fence line toggles the state, so a fence line with an info string can close
 * a block too; an unterminated fence runs to `endLine`. One pass over the lines.
 */
export function fenceSpans(
  bytes: Uint8Array,
  lineStarts: Uint32Array,
  firstLine: number,
  endLine: number,
): FenceSpan[] {
  const spans: FenceSpan[] = [];
  let plainStart = firstLine;
  let fenceStart = -1;
  for (let line = firstLine; line < endLine; line++) {
    if (!isFenceLine(bytes, lineStarts[line], lineStarts[line + 1])) continue;
    if (fenceStart < 0) {
      if (line > plainStart) spans.push({ fenced: false, firstLine: plainStart, endLine: line });
      fenceStart = line;
    } else {
      spans.push({ fenced: true, firstLine: fenceStart, endLine: line + 1 });
      fenceStart = -1;
      plainStart = line + 1;
    }
  }
  if (fenceStart >= 0) spans.push({ fenced: true, firstLine: fenceStart, endLine });
  else if (plainStart < endLine) spans.push({ fenced: false, firstLine: plainStart, endLine });
  return spans;
}

/**
 * Whether a line opens or closes a fence: after any leading whitespace it starts with three
 * backticks (a fourth is just text; `~~~` is no fence).
 */
function isFenceLine(bytes: Uint8Array, start: number, end: number): boolean {
  let at = start;
  while (at < end) {
    const width = whitespaceLength(bytes, at, end);
    if (width === 0) break;
    at += width;
  }
  return (
    at + 3 <= end &&
    bytes[at] === BACKTICK &&
    bytes[at + 1] === BACKTICK &&
    bytes[at + 2] === BACKTICK
  );
}

/** A unit of packing: a fenced block (atomic, never cut) or a paragraph (hard-split if too big). */
interface Unit extends ByteRange {
  atomic: boolean;
}

/**
 * `bytes[start, end)` in chunks of at most `maxBytes` (the original's `chunk_text` with the
 * paragraph boundary and no overlap): none for an empty range, the whole range when it fits,
 * otherwise paragraphs packed greedily. A fenced block over the ceiling stays one oversized chunk;
 * the caller decides its fate.
 */
export function paragraphChunks(
  bytes: Uint8Array,
  start: number,
  end: number,
  maxBytes: number,
): ByteRange[] {
  if (start === end) return [];
  if (end - start <= maxBytes) return [{ start, end }];
  return packUnits(bytes, units(bytes, start, end), maxBytes);
}

/** The fenced blocks and paragraphs of `bytes[start, end)`, in order, partitioning it. */
function units(bytes: Uint8Array, start: number, end: number): Unit[] {
  const lineStarts = lineStartsOf(bytes, start, end);
  const found: Unit[] = [];
  for (const span of fenceSpans(bytes, lineStarts, 0, lineStarts.length - 1)) {
    const spanStart = lineStarts[span.firstLine];
    const spanEnd = lineStarts[span.endLine];
    if (span.fenced) found.push({ start: spanStart, end: spanEnd, atomic: true });
    else pushParagraphs(bytes, spanStart, spanEnd, found);
  }
  return found;
}

/**
 * Cuts plain text after each blank-line run: a `\n\n` and any `\n`s right after it. A `\r\n\r\n`
 * is no blank-line run here, as in the original; such text falls back to hard splits.
 */
function pushParagraphs(bytes: Uint8Array, start: number, end: number, out: Unit[]): void {
  let paragraphStart = start;
  let at = start;
  for (;;) {
    const newline = bytes.indexOf(NEWLINE, at);
    if (newline < 0 || newline + 1 >= end) break;
    at = newline + 1;
    if (bytes[at] !== NEWLINE) continue;
    while (at < end && bytes[at] === NEWLINE) at++;
    out.push({ start: paragraphStart, end: at, atomic: false });
    paragraphStart = at;
  }
  if (paragraphStart < end) out.push({ start: paragraphStart, end, atomic: false });
}

/**
 * Packs consecutive units while the chunk stays within `maxBytes`. A unit over the ceiling seals
 * the open chunk and stands alone: whole if atomic, hard-split otherwise; packing then starts
 * afresh after it.
 */
function packUnits(bytes: Uint8Array, found: readonly Unit[], maxBytes: number): ByteRange[] {
  const chunks: ByteRange[] = [];
  let open: ByteRange | undefined;
  for (const unit of found) {
    if (unit.end - unit.start > maxBytes) {
      if (open !== undefined) chunks.push(open);
      open = undefined;
      if (unit.atomic) chunks.push({ start: unit.start, end: unit.end });
      else hardSplit(bytes, unit.start, unit.end, maxBytes, chunks);
    } else if (open !== undefined && unit.end - open.start <= maxBytes) {
      open = { start: open.start, end: unit.end };
    } else {
      if (open !== undefined) chunks.push(open);
      open = { start: unit.start, end: unit.end };
    }
  }
  if (open !== undefined) chunks.push(open);
  return chunks;
}

/**
 * Appends `bytes[start, end)` cut every `maxBytes`, each cut moved back to a character boundary;
 * when the ceiling is smaller than the character at a cut's start, the cut moves forward to the
 * next boundary instead, so no character is ever split and no chunk is empty.
 */
export function hardSplit(
  bytes: Uint8Array,
  start: number,
  end: number,
  maxBytes: number,
  out: ByteRange[],
): void {
  for (let at = start; at < end; ) {
    let cut = Math.min(at + maxBytes, end);
    while (cut > at && cut < end && isContinuationByte(bytes, cut)) cut--;
    if (cut === at) {
      cut = at + 1;
      while (cut < end && isContinuationByte(bytes, cut)) cut++;
    }
    out.push({ start: at, end: cut });
    at = cut;
  }
}
