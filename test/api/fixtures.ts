/** What the API tests share: topic index entries and results as extraction stores them. */
import type { SegmentResult, TopicSupport } from "../../lib/knowledge/index.js";

/** The entry segment `segment` stores for `topic` (normalized as extraction does: lower case). */
export function support(
  channel: string,
  topic: string,
  segment: number,
  overrides: Partial<TopicSupport> = {},
): TopicSupport {
  const segmentId = `s${String(segment).padStart(5, "0")}`;
  return {
    v: 1,
    channel,
    topic,
    normalizedTopic: topic.toLowerCase().replace(/\s+/g, " ").trim(),
    segmentId,
    candidateId: `${segmentId}-${topic.length}`,
    late: false,
    confidence: 0.5 + (segment % 5) / 10,
    reason: "said in the segment",
    tags: ["t"],
    messageIds: [`${segmentId}-m0`, `${segmentId}-m3`],
    firstTs: Date.UTC(2026, 0, 1) + segment * 60_000,
    lastTs: Date.UTC(2026, 0, 1) + segment * 60_000 + 180_000,
    ...overrides,
  };
}

export function result(channel: string, segmentId: string): SegmentResult {
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
  };
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
