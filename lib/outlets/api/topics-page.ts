/**
 * A page of topics, in one of two orders. `key`: from one bounded read of the topic index, which
 * is sorted by topic key (a hash of the normalized topic) and then segment: a topic's entries are
 * adjacent, so a page is the first whole topics of one Query, merged within the page
 * (`mergeSupports`: aliases on one page become one topic; aliases on different pages stay apart,
 * the price of never reading the whole index). The entry a Query reads past its topics tells
 * whether the last topic is whole; a topic with more entries than a page reads is returned alone
 * and marked `partial`. `support`: from the whole index, up to `RANKED_ENTRIES` entries
 * (`limits.ts`), merged and ranked as `KnowledgeReader.topics` (and `npm start -- topics`) ranks
 * them.
 */
import { createHash } from "node:crypto";
import { mergeSupports, type Topic } from "../../knowledge/read/index.js";
import type { TopicSupport } from "../../knowledge/store/index.js";
import type { TopicEntriesRead } from "./ports.js";
import type { ApiTopic } from "./schemas.js";

/** As the results table's sort key holds it: the first 16 hex digits of SHA-256. */
export const topicKeyOf = (normalizedTopic: string) =>
  createHash("sha256").update(normalizedTopic).digest("hex").slice(0, 16);

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

/**
 * Where a ranked page ends: the last topic's rank (`KnowledgeReader.topics`' order: segments,
 * best confidence, last seen, each descending) and its topic key. The key, not the name, so that
 * a cursor stays short whatever the topic's text.
 */
export type RankPosition = [
  segments: number,
  bestConfidence: number,
  lastSeen: number,
  key: string,
];

const TOPIC_KEY = /^[0-9a-f]{16}$/;

/** A key-order cursor's position: a topic key. */
export function isTopicKey(value: unknown): value is string {
  return typeof value === "string" && TOPIC_KEY.test(value);
}

/** A ranked cursor's position, as {@link rankedTopicsPage} gives it. */
export function isRankPosition(value: unknown): value is RankPosition {
  if (!Array.isArray(value) || value.length !== 4) return false;
  const [segments, confidence, lastSeen, key] = value;
  return (
    Number.isSafeInteger(segments) &&
    Number.isFinite(confidence) &&
    Number.isSafeInteger(lastSeen) &&
    isTopicKey(key)
  );
}

export interface RankedPageResult {
  topics: ApiTopic[];
  after: RankPosition | null;
  /** False when the index had more than the entries read: the ranking is of those read. */
  complete: boolean;
}

/**
 * The `limit` topics after `after` of the whole index `read` (at most `RANKED_ENTRIES`
 * entries), merged and ranked. A topic the read may have cut is left out, unless it is all the
 * read holds (then it is `partial`).
 */
export function rankedTopicsPage(
  read: TopicEntriesRead,
  limit: number,
  after: RankPosition | null,
): RankedPageResult {
  let entries = read.entries;
  let partial = false;
  if (read.more) {
    const cut = entries[entries.length - 1]?.topicKey;
    const whole = entries.filter((e) => e.topicKey !== cut);
    if (whole.length > 0) entries = whole;
    else partial = true;
  }
  const ranked = mergeSupports(entries.map((e) => e.support));
  const start = after === null ? 0 : resumeAt(ranked, after);
  const page = ranked.slice(start, start + limit);
  const last = page[page.length - 1];
  return {
    topics: page.map((t) => ({ ...t, partial })),
    after:
      last === undefined || start + limit >= ranked.length
        ? null
        : [last.segments, last.bestConfidence, last.lastSeen, topicKeyOf(last.normalizedTopic)],
    complete: !read.more,
  };
}

/**
 * The index of the first topic after `after`: right after its topic when it is still where it
 * was; else (the index changed between pages) the first of its rank, ties included, so that a
 * topic may come twice but none is skipped.
 */
function resumeAt(ranked: readonly Topic[], after: RankPosition): number {
  const [segments, confidence, lastSeen, key] = after;
  const sameRank = (t: Topic) =>
    t.segments === segments && t.bestConfidence === confidence && t.lastSeen === lastSeen;
  const at = ranked.findIndex((t) => sameRank(t) && topicKeyOf(t.normalizedTopic) === key);
  if (at >= 0) return at + 1;
  const next = ranked.findIndex(
    (t) => (segments - t.segments || confidence - t.bestConfidence || lastSeen - t.lastSeen) >= 0,
  );
  return next < 0 ? ranked.length : next;
}
