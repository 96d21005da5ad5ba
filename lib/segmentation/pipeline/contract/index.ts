/**
 * The pipeline's contract with what reads its output. The v1 segment message on the queue (its
 * type, encoder, parser and errors), the FIFO addressing rule producers share, and the
 * `--candidates` line of a local run. Consumers import this and nothing of the engine.
 */
export type { CandidatesLine } from "./candidates-line.js";
export { fifoId } from "./fifo-id.js";
export { parseSegmentBody } from "./segment-body-parse.js";
export {
  DEFAULT_MAX_BODY_BYTES,
  encodeBody,
  type InlineMessage,
  InvalidSegmentMessageError,
  isSqsBody,
  MissingSegmentMessagesError,
  readSegmentMessages,
  readThreadRoot,
  type SegmentMessageSource,
  type SegmentMessageV1,
  SegmentTooLargeError,
  segmentBody,
} from "./segment-message.js";
