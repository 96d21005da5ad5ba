import type { SegmentKind } from "./types.js";

/**
 * A segment before assembly: a byte range of the original text with its turn, role and kind.
 * `content` is set only for JSONL pieces (and their re-split children), whose content is decoded
 * JSON and no slice of the text; a piece without it is the exact text of its range. `timestamp`
 * is a JSONL line's own string `timestamp`, when it has one.
 */
export interface RawPiece {
  kind: SegmentKind;
  start: number;
  end: number;
  turn: number;
  role: string | null;
  content?: string;
  timestamp?: string;
}
