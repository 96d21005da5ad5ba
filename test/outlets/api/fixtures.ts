/** What the API tests share: topic index entries and results as extraction stores them. */
import type { SegmentResult, TopicSupport } from "convoseg/knowledge/store";
import { segmentResult, topicSupport } from "../../support/segment-result.js";

/** The entry segment `segment` stores for `topic` (normalized as extraction does: lower case). */
export function support(
  channel: string,
  topic: string,
  segment: number,
  overrides: Partial<TopicSupport> = {},
): TopicSupport {
  const segmentId = `s${String(segment).padStart(5, "0")}`;
  const at = Date.UTC(2026, 0, 1) + segment * 60_000;
  return topicSupport(channel, segmentId, topic, topic.toLowerCase().replace(/\s+/g, " ").trim(), {
    candidateId: `${segmentId}-${topic.length}`,
    confidence: 0.5 + (segment % 5) / 10,
    reason: "said in the segment",
    tags: ["t"],
    messageIds: [`${segmentId}-m0`, `${segmentId}-m3`],
    firstTs: at,
    lastTs: at + 180_000,
    ...overrides,
  });
}

export function result(channel: string, segmentId: string): SegmentResult {
  return segmentResult(channel, segmentId, {
    usage: { calls: 1, inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
    candidates: [
      {
        id: "c1",
        topic: "deploys",
        reason: "they deploy",
        confidence: 0.9,
        tags: [],
        subjective: false,
        turnRange: [0, 1],
        messageIds: ["m1", "m2"],
        authorCount: 2,
        authors: ["alice", "bob"],
      },
    ],
    windows: ["h1"],
  });
}

/** A GET of `path` (with its query string). */
export function get(path: string, headers: Record<string, string> = {}) {
  const at = path.indexOf("?");
  return {
    method: "GET",
    rawPath: at < 0 ? path : path.slice(0, at),
    rawQuery: at < 0 ? "" : path.slice(at + 1),
    headers,
  };
}
