/**
 * The segment fields extraction needs, apart from the extractor that uses them: the message
 * states and the redaction read them too, and would otherwise import the extractor.
 */

import { kindOf } from "../../history/index.js";
import type { SegmentMessageV1 } from "../../segmentation/pipeline/contract/index.js";
import type { AuthoredTurn } from "../extraction/prompts/index.js";

/**
 * The segment fields extraction needs: any v1 segment message has them (a thread's segment also
 * `thread`, and its root as context in `threadRoot`).
 */
export type SegmentEnvelope = Pick<
  SegmentMessageV1,
  | "segmentId"
  | "channel"
  | "late"
  | "belongsAfter"
  | "count"
  | "first"
  | "last"
  | "thread"
  | "threadRoot"
>;

/**
 * The envelope of an on-time segment made of `messages` (non-empty, in segment order), as a
 * transcript import or a benchmark extracts one outside the pipeline.
 */
export function onTimeEnvelope(
  segmentId: string,
  channel: string,
  messages: readonly { id: string; ts: number }[],
): SegmentEnvelope {
  const first = messages[0];
  const last = messages.at(-1);
  if (first === undefined || last === undefined) {
    throw new RangeError(`channel ${channel}: a segment needs at least one message`);
  }
  return {
    segmentId,
    channel,
    late: false,
    belongsAfter: null,
    count: messages.length,
    first: { id: first.id, ts: first.ts },
    last: { id: last.id, ts: last.ts },
  };
}

/**
 * A thread's segment's root as the context its replies are rendered after (a user turn with its
 * author and text); undefined for the channel's own stream, a root not carried, or a system
 * line when the extractor is not shown them.
 */
export function threadContext(
  segment: SegmentEnvelope,
  showSystemLines: boolean,
): AuthoredTurn | undefined {
  const root = segment.threadRoot;
  if (root === undefined || (!showSystemLines && kindOf(root) === "system")) return undefined;
  const context: AuthoredTurn = { role: "user", content: root.text, id: root.id };
  if (root.author !== undefined) context.author = root.author;
  return context;
}
