/**
 * Normalizing the raw pieces (`docs/specs/transcript.md` §3 steps 3 to 6, §9): oversized fences
 * are rejected, oversized bodies and logs re-split under `MAX_FRAGMENT_BYTES`, small neighbours
 * merged, and the fragment count capped. Each step is one pass over the pieces.
 */
import { type ByteRange, hardSplit, paragraphChunks } from "./chunk.js";
import { ContextOverLimitError } from "./errors.js";
import { MAX_FRAGMENT_BYTES, MAX_FRAGMENTS } from "./limits.js";
import type { RawPiece } from "./piece.js";
import { decodeUtf8, encodeUtf8, lineEnd, measureUtf8 } from "./source.js";

/**
 * Rejects the first `code` piece over the fragment cap: a fence is never cut, so it cannot be
 * brought under the cap the way a body can. Its size is the whole fence, fence lines included.
 */
export function rejectOversizedFences(pieces: readonly RawPiece[]): void {
  const oversized = pieces.find((p) => p.kind === "code" && p.end - p.start > MAX_FRAGMENT_BYTES);
  if (oversized !== undefined) throw oversizedFenceError(oversized.end - oversized.start);
}

function oversizedFenceError(bytes: number): ContextOverLimitError {
  return new ContextOverLimitError(
    `an unsplittable fenced code block of ${bytes} bytes exceeds the cap of ${MAX_FRAGMENT_BYTES} bytes`,
    "MAX_FRAGMENT_BYTES",
    MAX_FRAGMENT_BYTES,
    bytes,
  );
}

/** Every `body` and `log` piece over the cap replaced by its children; `code` passes untouched. */
export function resplitOversized(bytes: Uint8Array, pieces: readonly RawPiece[]): RawPiece[] {
  return pieces.flatMap((piece) => {
    if (piece.kind === "log") return resplitLog(bytes, piece);
    if (piece.kind === "code") return [piece];
    return piece.content === undefined
      ? resplitPlainBody(bytes, piece)
      : resplitContentBody(piece, piece.content);
  });
}

/**
 * A plain body over the cap, cut by the paragraph chunker: after blank-line runs, hard splits
 * on character boundaries inside a paragraph over the cap. The children partition the piece.
 */
function resplitPlainBody(bytes: Uint8Array, piece: RawPiece): RawPiece[] {
  if (piece.end - piece.start <= MAX_FRAGMENT_BYTES) return [piece];
  return paragraphChunks(bytes, piece.start, piece.end, MAX_FRAGMENT_BYTES).map(
    ({ start, end }) => ({ ...piece, start, end }),
  );
}

/**
 * A JSONL body whose decoded content is over the cap: the chunker cuts the content, and the
 * line's byte range is divided among the children in proportion to their content's bytes (the
 * JSON escaping leaves no exact mapping). A fence in the content stays whole, so one over the cap
 * is rejected here as `rejectOversizedFences` rejects a plain one; its size is in content bytes.
 */
function resplitContentBody(piece: RawPiece, content: string): RawPiece[] {
  if (measureUtf8(content).byteLength <= MAX_FRAGMENT_BYTES) return [piece];
  const contentBytes = encodeUtf8(content);
  const chunks = paragraphChunks(contentBytes, 0, contentBytes.length, MAX_FRAGMENT_BYTES);
  const oversized = chunks.find(({ start, end }) => end - start > MAX_FRAGMENT_BYTES);
  if (oversized !== undefined) throw oversizedFenceError(oversized.end - oversized.start);
  const ranges = partitionByWeight(
    piece,
    chunks.map(({ start, end }) => end - start),
  );
  return chunks.map((chunk, index) => ({
    ...piece,
    ...ranges[index],
    content: decodeUtf8(contentBytes, chunk.start, chunk.end),
  }));
}

/**
 * `range` cut into contiguous parts sized in proportion to `weights`: part i ends at
 * `start + floor(span * cumulative_i / total)` and the last exactly at `range.end`; a zero total
 * counts as 1. The products stay below 2^53 (both factors are at most 8 MiB), so the division is
 * exact integer arithmetic, as in the original.
 */
export function partitionByWeight(range: ByteRange, weights: readonly number[]): ByteRange[] {
  const total = Math.max(
    1,
    weights.reduce((sum, weight) => sum + weight, 0),
  );
  const span = range.end - range.start;
  let cumulative = 0;
  let start = range.start;
  return weights.map((weight, index) => {
    cumulative += weight;
    const end =
      index === weights.length - 1
        ? range.end
        : range.start + Math.floor((span * cumulative) / total);
    const part = { start, end };
    start = end;
    return part;
  });
}

/**
 * A log piece over the cap, packed greedily on line boundaries so no line is cut: a chunk is
 * sealed before a line that would overflow it, and a single line over the cap is sealed off
 * alone and hard-split on character boundaries.
 */
function resplitLog(bytes: Uint8Array, piece: RawPiece): RawPiece[] {
  if (piece.end - piece.start <= MAX_FRAGMENT_BYTES) return [piece];
  const ranges: ByteRange[] = [];
  let chunkStart = piece.start;
  for (let lineStart = piece.start; lineStart < piece.end; ) {
    const end = lineEnd(bytes, lineStart, piece.end);
    if (end - lineStart > MAX_FRAGMENT_BYTES) {
      if (chunkStart < lineStart) ranges.push({ start: chunkStart, end: lineStart });
      hardSplit(bytes, lineStart, end, MAX_FRAGMENT_BYTES, ranges);
      chunkStart = end;
    } else if (end - chunkStart > MAX_FRAGMENT_BYTES) {
      ranges.push({ start: chunkStart, end: lineStart });
      chunkStart = lineStart;
    }
    lineStart = end;
  }
  if (chunkStart < piece.end) ranges.push({ start: chunkStart, end: piece.end });
  return ranges.map(({ start, end }) => ({ ...piece, start, end }));
}

/**
 * One forward pass: a piece is absorbed into the last emitted one (which may have grown already)
 * when both are of the same turn and kind, neither carries decoded JSONL content, they are
 * byte-adjacent, together they stay within the cap, and at least one is under `minBytes`. Never
 * across turns; `minBytes = 0` merges nothing. The input pieces are left as they are.
 */
export function mergeSmallPieces(pieces: readonly RawPiece[], minBytes: number): RawPiece[] {
  const merged: RawPiece[] = [];
  for (const piece of pieces) {
    const last = merged.at(-1);
    if (last !== undefined && canAbsorb(last, piece, minBytes)) {
      merged[merged.length - 1] = { ...last, end: piece.end };
    } else {
      merged.push(piece);
    }
  }
  return merged;
}

function canAbsorb(last: RawPiece, next: RawPiece, minBytes: number): boolean {
  const lastBytes = last.end - last.start;
  const nextBytes = next.end - next.start;
  return (
    last.turn === next.turn &&
    last.kind === next.kind &&
    last.content === undefined &&
    next.content === undefined &&
    last.end === next.start &&
    lastBytes + nextBytes <= MAX_FRAGMENT_BYTES &&
    (lastBytes < minBytes || nextBytes < minBytes)
  );
}

/**
 * Throws when more than `MAX_FRAGMENTS` pieces remain after merging. The advice is the
 * original's ("raise minSegmentBytes") only when it can work: when merging every mergeable
 * neighbour, which any `minSegmentBytes` over `MAX_FRAGMENT_BYTES` does, gets under the cap.
 * Otherwise (many turns or JSONL lines, which never merge) the message says so and that the
 * transcript must be split.
 */
export function capFragmentCount(resplit: readonly RawPiece[], mergedCount: number): void {
  if (mergedCount <= MAX_FRAGMENTS) return;
  const fewest = mergeSmallPieces(resplit, Number.POSITIVE_INFINITY).length;
  const advice =
    fewest <= MAX_FRAGMENTS
      ? "raise minSegmentBytes to merge more small segments"
      : `even the largest minSegmentBytes leaves ${fewest}, since segments never merge across turns, kinds or JSONL lines: split the transcript`;
  throw new ContextOverLimitError(
    `transcript segmented into ${mergedCount} fragments, exceeding the cap of ${MAX_FRAGMENTS} — ${advice}`,
    "MAX_FRAGMENTS",
    MAX_FRAGMENTS,
    mergedCount,
  );
}
