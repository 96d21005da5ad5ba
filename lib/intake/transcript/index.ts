/**
 * Agent transcripts as messages: decoded, segmented into turns and pieces, turned into messages.
 * A file's bytes are decoded to text, or refused as binary data or another encoding
 * (`./decode.ts`, before the segmenter); a raw agent-session transcript (plain text with role
 * markers, or JSONL) is segmented deterministically into turns and, within each plain turn,
 * fenced code, log runs and body text (a port of velesdb-memory's `segment` module,
 * `docs/specs/transcript.md`; the rules are in `./segment-transcript.ts`). Here "segment" is a
 * piece of one transcript, not a chat conversation.
 */
export {
  type DecodedTranscript,
  decodeTranscript,
  inFileBytes,
  TRANSCRIPT_ENCODINGS,
  type TranscriptEncoding,
} from "./decode.js";
export {
  ContextOverLimitError,
  SegmentationError,
  TranscriptEncodingError,
  TranscriptError,
} from "./errors.js";
export type { JsonlLineProblem } from "./jsonl.js";
export {
  MAX_FRAGMENT_BYTES,
  MAX_FRAGMENTS,
  MAX_TOOL_INPUT_BYTES,
  MAX_TOOL_RESULT_BYTES,
  MAX_TRANSCRIPT_BYTES,
} from "./limits.js";
export { checkJsonl, segmentTranscript } from "./segment-transcript.js";
export { importedTurns, transcriptId, transcriptMessages } from "./turns.js";
export {
  DEFAULT_SEGMENTATION_POLICY,
  type SegmentationOutcome,
  type SegmentationPolicy,
  type SegmentFormat,
  /** @public Part of this entry point's API for callers outside the repository. */
  type SegmentKind,
  type TranscriptSegment,
} from "./types.js";
