/**
 * The segment fields extraction needs, apart from the extractor that uses them: the message
 * states and the redaction read them too, and would otherwise import the extractor.
 */
import type { SegmentMessageV1 } from "../pipeline/contract/index.js";

/** The segment fields extraction needs: any v1 segment message has them. */
export type SegmentEnvelope = Pick<
  SegmentMessageV1,
  "segmentId" | "channel" | "late" | "belongsAfter" | "count" | "first" | "last"
>;
