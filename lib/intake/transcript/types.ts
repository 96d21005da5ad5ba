/** The public types of transcript segmentation: its policy, segments and outcome. */

/** Which format to assume: detect it (`auto`), or force `plain` or `jsonl` (no fallback). */
export type SegmentFormat = "auto" | "plain" | "jsonl";
/** What a segment holds: text, an atomic fenced block, or a run of 8 or more log lines. */
export type SegmentKind = "body" | "code" | "log";

export interface SegmentationPolicy {
  format: SegmentFormat;
  /** Segments under this many bytes merge into an adjacent one of the same turn and kind. */
  minSegmentBytes: number;
  /** Marks every segment of turn 0 with `cache: true` when its role is `system` in any case. */
  cacheSystemTurn: boolean;
}

export const DEFAULT_SEGMENTATION_POLICY: Readonly<SegmentationPolicy> = Object.freeze({
  format: "auto",
  minSegmentBytes: 256,
  cacheSystemTurn: true,
});

export interface TranscriptSegment {
  /** 0-based, in transcript order. */
  turn: number;
  /** The marker's role (`User`, `Human`, …) in plain text, the JSON `role` verbatim in JSONL. */
  role: string | null;
  kind: SegmentKind;
  /** Half-open UTF-8 byte offsets into the original text; the segments partition it. */
  byteStart: number;
  byteEnd: number;
  /** The decoded JSONL content, or the exact text of the range. */
  content: string;
  metadata: { role: string | null; turn: number; cache?: true };
  /** A JSONL line's own top-level `timestamp` string, as written; absent when it has none. */
  timestamp?: string;
}

export interface SegmentationOutcome {
  formatDetected: "plain" | "jsonl";
  segments: TranscriptSegment[];
  /** How many pieces merging removed: pieces after re-splitting minus the final segments. */
  mergedSegments: number;
}
