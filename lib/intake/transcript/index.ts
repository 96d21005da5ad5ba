/**
 * Agent transcripts: a file's bytes decoded to text, or refused as binary data or another
 * encoding (`./decode.ts`, before the segmenter); deterministic segmentation of a raw
 * agent-session transcript (plain text with role markers, or JSONL) into turns and, within each
 * plain turn, fenced code, log runs and body text (a port of velesdb-memory's `segment` module,
 * `docs/specs/transcript.md`; the rules are in `./segment-transcript.ts`); and its turns as the
 * product's messages. Here "segment" is a piece of one transcript, not a chat conversation.
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
  type TranscriptCap,
  TranscriptEncodingError,
  TranscriptError,
} from "./errors.js";
export type { JsonlCheck, JsonlLineProblem } from "./jsonl.js";
export {
  MAX_FRAGMENT_BYTES,
  MAX_FRAGMENTS,
  MAX_TOOL_INPUT_BYTES,
  MAX_TOOL_RESULT_BYTES,
  MAX_TRANSCRIPT_BYTES,
} from "./limits.js";
export { checkJsonl, segmentTranscript } from "./segment-transcript.js";
export {
  type ImportedTurn,
  importedTurns,
  transcriptId,
  transcriptMessages,
} from "./turns.js";
export {
  DEFAULT_SEGMENTATION_POLICY,
  type SegmentationOutcome,
  type SegmentationPolicy,
  type SegmentFormat,
  type SegmentKind,
  type TranscriptSegment,
} from "./types.js";
