/**
 * A page of topics from one bounded read of the topic index. The index is sorted by topic key
 * (a hash of the normalized topic) and then segment: a topic's entries are adjacent, so a page
 * is the first whole topics of one Query, merged within the page (`mergeSupports`: aliases on
 * one page become one topic; aliases on different pages stay apart, the price of never reading
 * the whole index). The entry a Query reads past its topics tells whether the last topic is
 * whole; a topic with more entries than a page reads is returned alone and marked `partial`.
 */
import { mergeSupports } from "../../knowledge/read/index.js";
import type { TopicSupport } from "../../knowledge/store/index.js";
import type { TopicEntriesRead } from "./ports.js";
import type { ApiTopic } from "./schemas.js";

/** Topics per page, and the entries one page reads for `limit` topics. */
export const TOPIC_LIMITS = { default: 20, max: 100 } as const;
const ENTRIES_PER_TOPIC = 8;
const MIN_ENTRIES = 50;
const MAX_ENTRIES = 1000;

/** The entries a page of `limit` topics reads at most (the Query's `Limit`, less one). */
export function entryBudget(limit: number): number {
  return Math.min(MAX_ENTRIES, Math.max(MIN_ENTRIES, limit * ENTRIES_PER_TOPIC));
}

export interface TopicsPageResult {
  topics: ApiTopic[];
  /** The topic key the next page reads after, or null when this page is the last. */
  after: string | null;
}

/**
 * The first `limit` whole topics of `read` (at most `budget` entries, and the one past them
 * that says whether the last is whole), merged; `after` where the next page starts.
 */
export function topicsPage(
  read: TopicEntriesRead,
  limit: number,
  budget: number,
): TopicsPageResult {
  const entries = read.entries.slice(0, budget);
  const past = read.entries[budget];
  const groups: { key: string; supports: TopicSupport[] }[] = [];
  for (const { topicKey, support } of entries) {
    const last = groups[groups.length - 1];
    if (last !== undefined && last.key === topicKey) last.supports.push(support);
    else groups.push({ key: topicKey, supports: [support] });
  }
  let more = read.more || past !== undefined;
  // The last topic may go on past the read: unless the entry past it begins another topic.
  const lastCut = more && (past === undefined || past.topicKey === groups[groups.length - 1]?.key);
  let partial = false;
  if (lastCut && groups.length > 1) groups.pop();
  else if (lastCut) partial = true;
  if (groups.length > limit) {
    groups.length = limit;
    more = true;
  }
  if (groups.length === 0) return { topics: [], after: null };
  const topics = mergeSupports(groups.flatMap((g) => g.supports)).map((t) => ({ ...t, partial }));
  return { topics, after: more ? groups[groups.length - 1].key : null };
}
