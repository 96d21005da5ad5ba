/**
 * Transcript segmentation's caps, in UTF-8 bytes and in fragments (`docs/specs/transcript.md` §2).
 * Every size is compared in bytes, never in characters.
 */

/** 8 MiB: a longer transcript is rejected before any other work; exactly 8 MiB is accepted. */
export const MAX_TRANSCRIPT_BYTES = 8 * 1024 * 1024;
/** 1 MiB: the most one segment's content may hold; larger pieces are re-split or rejected. */
export const MAX_FRAGMENT_BYTES = 1024 * 1024;
/** The most segments one transcript may give after merging; exactly 1024 is accepted. */
export const MAX_FRAGMENTS = 1024;
/** A tool result's text keeps its first 2 KiB in a JSONL turn; the cut is marked. */
export const MAX_TOOL_RESULT_BYTES = 2048;
/** A tool call's input summary keeps its first 256 bytes in a JSONL turn; the cut is marked. */
export const MAX_TOOL_INPUT_BYTES = 256;
