/**
 * {@link ApiSources} in memory, with the DynamoDB ones' orders and bounds (the topic index in
 * sort key order, `limit` entries and one past, channels in key order): for tests and for
 * embedding the API over data already in memory.
 */
import type { SegmentResult, TopicSupport } from "../../knowledge/store/index.js";
import type {
  ApiSources,
  ChannelFacts,
  ChannelsPosition,
  KeyedSupport,
  OptionalSources,
} from "./ports.js";
import { topicKeyOf } from "./topics-page.js";

/** A channel of the listing, with what its messages say of it. */
type MemoryChannel = { channel: string } & Partial<ChannelFacts>;

export interface MemoryApiData extends OptionalSources {
  channels?: readonly (string | MemoryChannel)[];
  supports?: readonly TopicSupport[];
  results?: readonly SegmentResult[];
}

const byCode = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function memoryApiSources(data: MemoryApiData): ApiSources {
  const listed = new Map<string, MemoryChannel>();
  for (const given of data.channels ?? []) {
    const entry = typeof given === "string" ? { channel: given } : given;
    listed.set(entry.channel, entry);
  }
  const channels = [...listed.keys()].sort(byCode);
  const index = new Map<string, KeyedSupport[]>();
  for (const support of data.supports ?? []) {
    const list = index.get(support.channel) ?? [];
    list.push({ topicKey: topicKeyOf(support.normalizedTopic), support });
    index.set(support.channel, list);
  }
  for (const list of index.values()) {
    list.sort(
      (a, b) => byCode(a.topicKey, b.topicKey) || byCode(a.support.segmentId, b.support.segmentId),
    );
  }
  return {
    async channels({ after, evaluate }) {
      const from = after === null ? 0 : channels.findIndex((c) => c > after.channel);
      const start = from < 0 ? channels.length : from;
      const page = channels.slice(start, start + evaluate);
      const next: ChannelsPosition | null =
        start + evaluate < channels.length
          ? { channel: page[page.length - 1], item: "marks" }
          : null;
      return { channels: page, next };
    },
    async topicEntries(channel, { afterTopicKey, limit }) {
      const list = index.get(channel) ?? [];
      const from = afterTopicKey === null ? list : list.filter((e) => e.topicKey > afterTopicKey);
      const entries = from.slice(0, limit + 1);
      return { entries, more: entries.length > limit };
    },
    async describe(channel) {
      const facts = listed.get(channel);
      return {
        name: facts?.name ?? null,
        platform: facts?.platform ?? null,
        first: facts?.first ?? null,
        last: facts?.last ?? null,
        messages: facts?.messages ?? null,
      };
    },
    async topicIndex(channel, { max }) {
      const list = index.get(channel) ?? [];
      return { entries: list.slice(0, max), more: list.length > max };
    },
    async known(channel) {
      return (
        channels.includes(channel) ||
        index.has(channel) ||
        (data.results ?? []).some((r) => r.channel === channel)
      );
    },
    async segment(channel, segmentId) {
      return data.results?.find((r) => r.channel === channel && r.segmentId === segmentId);
    },
    ...(data.questions && { questions: data.questions }),
    ...(data.digest && { digest: data.digest }),
    ...(data.search && { search: data.search }),
    ...(data.stats && { stats: data.stats }),
    ...(data.corrections && { corrections: data.corrections }),
  };
}
