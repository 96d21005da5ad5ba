/**
 * A candidate's topic index entry, as extraction writes it and a redaction rewrites it: one
 * place, so that the two never disagree on an entry's fields.
 */
import { normalizeTopic } from "../extraction/index.js";
import type { SegmentResult, StoredCandidate, TopicSupport } from "./schema/items.js";

/** The entry of `candidate`, its evidence from `firstTs` to `lastTs`. */
export function supportOf(
  result: SegmentResult,
  candidate: StoredCandidate,
  firstTs: number,
  lastTs: number,
): TopicSupport {
  const support: TopicSupport = {
    v: 1,
    channel: result.channel,
    topic: candidate.topic,
    normalizedTopic: normalizeTopic(candidate.topic),
    segmentId: result.segmentId,
    candidateId: candidate.id,
    late: result.late,
    confidence: candidate.confidence,
    reason: candidate.reason,
    tags: candidate.tags,
    messageIds: candidate.messageIds,
    firstTs,
    lastTs,
    extractedAt: result.extractedAt,
  };
  if (result.thread !== undefined) support.thread = result.thread;
  // An entry goes with its result (the result retention).
  if (result.expiresAt !== undefined) support.expiresAt = result.expiresAt;
  return support;
}
