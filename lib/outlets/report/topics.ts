/**
 * A channel's topics for the report's first screen: the candidates of its segments merged by
 * normalized topic, then their wordings of one topic merged into one (`lib/knowledge/topics`), as the
 * topic index merges them for `npm start -- topics`, each with the segments that support it and
 * when its evidence was said.
 */
import { normalizeTopic } from "../../knowledge/extraction/index.js";
import { mergeTopics } from "../../knowledge/topics/index.js";
import type { ChannelTopic, SegmentData } from "./data.js";

/**
 * The topics of a channel's `segments`, most supported first (then best confidence, then the
 * latest, then by name). `evidenceTimes(segment, range)` is when a candidate's evidence was
 * said: the first and last message of its range, or the segment's bounds without one.
 */
export function channelTopics(
  segments: readonly SegmentData[],
  evidenceTimes: (segment: number, range: [number, number] | null) => [number, number],
): ChannelTopic[] {
  const byKey = new Map<
    string,
    Omit<ChannelTopic, "aliases"> & { key: string; seen: Set<number> }
  >();
  segments.forEach((segment, s) => {
    segment.extraction?.topics.forEach((candidate, t) => {
      const key = normalizeTopic(candidate.topic);
      if (key === "") return;
      const [first, last] = evidenceTimes(s, candidate.range);
      let topic = byKey.get(key);
      if (topic === undefined) {
        topic = {
          key,
          seen: new Set(),
          topic: candidate.topic,
          supports: [],
          first,
          last,
          bestConfidence: candidate.confidence,
        };
        byKey.set(key, topic);
      }
      // A segment supports a topic once, however many of its candidates say it.
      if (topic.seen.has(s)) return;
      topic.seen.add(s);
      topic.supports.push([s, t]);
      topic.first = Math.min(topic.first, first);
      topic.last = Math.max(topic.last, last);
      if (candidate.confidence > topic.bestConfidence) {
        topic.bestConfidence = candidate.confidence;
        topic.topic = candidate.topic;
      }
    });
  });
  const aliases = [...byKey.values()].map((alias) => ({
    ...alias,
    segments: alias.supports.map(([segment]) => String(segment)),
    firstSeen: alias.first,
    lastSeen: alias.last,
  }));
  const merged = mergeTopics(aliases).map((canonical) => {
    const members = canonical.aliases;
    // A segment supports the topic once, through the first alias (most supported) it says.
    const bySegment = new Map<number, [number, number]>();
    for (const member of members) {
      for (const support of member.supports) {
        if (!bySegment.has(support[0])) bySegment.set(support[0], support);
      }
    }
    return {
      key: members[0].key,
      topic: canonical.topic,
      aliases: members.slice(1).map((m) => m.topic),
      supports: [...bySegment.values()],
      first: canonical.firstSeen,
      last: canonical.lastSeen,
      bestConfidence: Math.max(...members.map((m) => m.bestConfidence)),
    };
  });
  const sorted = merged.sort(
    (a, b) =>
      b.supports.length - a.supports.length ||
      b.bestConfidence - a.bestConfidence ||
      b.last - a.last ||
      (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
  return sorted.map(({ topic, aliases, supports, first, last, bestConfidence }) => ({
    topic,
    aliases,
    // Oldest conversation first.
    supports: supports.sort(([a], [b]) => segments[a].first - segments[b].first || a - b),
    first,
    last,
    bestConfidence,
  }));
}
