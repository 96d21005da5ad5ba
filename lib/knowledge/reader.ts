import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { ResultStore } from "./result-store.js";
import type { SegmentResult, TopicSupport } from "./schema/items.js";
import { DynamoDbResultStore } from "./store.js";

/** One segment's support for a topic: which messages say it. */
export interface TopicEvidence {
  segmentId: string;
  candidateId: string;
  late: boolean;
  /** The first and last message of the evidence, or null when the model gave no range. */
  messageIds: [string, string] | null;
  firstTs: number;
  lastTs: number;
  confidence: number;
}

/** A channel's topic, merged over every segment that supports it. */
export interface Topic {
  /** As said with the best confidence. */
  topic: string;
  normalizedTopic: string;
  /** How many segments support it. */
  segments: number;
  /** Epoch ms of the earliest and latest evidence. */
  firstSeen: number;
  lastSeen: number;
  bestConfidence: number;
  bestReason: string;
  /** Every tag any support gave, in order of first appearance. */
  tags: string[];
  /** Oldest first. */
  evidence: TopicEvidence[];
}

/**
 * Reads what extraction stored for a channel (or an imported conversation): its results and its
 * topic index, merged at read time from one entry per topic per segment, so that the index can
 * never count a segment twice whatever was redelivered or re-extracted.
 *
 * ```ts
 * const reader = new KnowledgeReader({ client: new DynamoDBClient({}), tableName: "…" });
 * for (const topic of await reader.topics("help", { limit: 10 })) console.log(topic.topic);
 * ```
 */
export class KnowledgeReader {
  private readonly store: ResultStore;

  constructor(options: { client: DynamoDBClient; tableName: string } | { store: ResultStore }) {
    this.store = "store" in options ? options.store : new DynamoDbResultStore(options);
  }

  /** The channel's topics, most supported first (then best confidence, then latest). */
  async topics(channel: string, options: { limit?: number } = {}): Promise<Topic[]> {
    const topics = mergeSupports(await this.store.listSupports(channel));
    return options.limit === undefined ? topics : topics.slice(0, options.limit);
  }

  result(channel: string, segmentId: string): Promise<SegmentResult | undefined> {
    return this.store.getResult(channel, segmentId);
  }

  /** Every stored result of the channel, in segment id order. */
  results(channel: string): Promise<SegmentResult[]> {
    return this.store.listResults(channel);
  }
}

/** The topic index from its entries: grouped by normalized topic, ordered as `topics` says. */
export function mergeSupports(supports: readonly TopicSupport[]): Topic[] {
  const byTopic = new Map<string, Topic>();
  for (const support of supports) {
    let topic = byTopic.get(support.normalizedTopic);
    if (topic === undefined) {
      topic = {
        topic: support.topic,
        normalizedTopic: support.normalizedTopic,
        segments: 0,
        firstSeen: support.firstTs,
        lastSeen: support.lastTs,
        bestConfidence: support.confidence,
        bestReason: support.reason,
        tags: [],
        evidence: [],
      };
      byTopic.set(support.normalizedTopic, topic);
    }
    topic.segments++;
    topic.firstSeen = Math.min(topic.firstSeen, support.firstTs);
    topic.lastSeen = Math.max(topic.lastSeen, support.lastTs);
    if (support.confidence > topic.bestConfidence) {
      topic.bestConfidence = support.confidence;
      topic.bestReason = support.reason;
      topic.topic = support.topic;
    }
    for (const tag of support.tags) if (!topic.tags.includes(tag)) topic.tags.push(tag);
    topic.evidence.push({
      segmentId: support.segmentId,
      candidateId: support.candidateId,
      late: support.late,
      messageIds: support.messageIds,
      firstTs: support.firstTs,
      lastTs: support.lastTs,
      confidence: support.confidence,
    });
  }
  const topics = [...byTopic.values()];
  for (const topic of topics) {
    topic.evidence.sort((a, b) => a.firstTs - b.firstTs || a.segmentId.localeCompare(b.segmentId));
  }
  return topics.sort(
    (a, b) =>
      b.segments - a.segments ||
      b.bestConfidence - a.bestConfidence ||
      b.lastSeen - a.lastSeen ||
      a.normalizedTopic.localeCompare(b.normalizedTopic),
  );
}
