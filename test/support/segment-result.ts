/**
 * The stored items the knowledge, digest and API tests build: a segment's result and a topic
 * index entry as extraction writes them, with what a test cares about given as overrides.
 */
import type { SegmentResult, TopicSupport } from "convoseg/knowledge/store";

/** A result of two messages, `m1` and `m2`, with no candidates, no questions and no calls. */
export function segmentResult(
  channel: string,
  segmentId: string,
  overrides: Partial<SegmentResult> = {},
): SegmentResult {
  return {
    v: 1,
    channel,
    segmentId,
    late: false,
    belongsAfter: null,
    count: 2,
    first: { id: "m1", ts: 1 },
    last: { id: "m2", ts: 2 },
    messageIds: ["m1", "m2"],
    model: "offline",
    promptVersion: "p1",
    extractedAt: "2026-01-01T00:00:00.000Z",
    usage: { calls: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    candidates: [],
    ...overrides,
  };
}

/** The entry `segmentId` stores for `topic`, whose normalized form the caller gives. */
export function topicSupport(
  channel: string,
  segmentId: string,
  topic: string,
  normalizedTopic: string,
  overrides: Partial<TopicSupport> = {},
): TopicSupport {
  return {
    v: 1,
    channel,
    topic,
    normalizedTopic,
    segmentId,
    candidateId: `${segmentId}-${topic}`,
    late: false,
    confidence: 0.5,
    reason: "said",
    tags: [],
    messageIds: [`${segmentId}-m0`, `${segmentId}-m1`],
    firstTs: 0,
    lastTs: 60_000,
    ...overrides,
  };
}
