/**
 * A channel's topics merged into canonical topics with aliases. Which topics name the same thing
 * is said by matchers (`TopicMatcher`): the token key today; an embeddings matcher can be added
 * beside it, its links joined in the same way, without changing how groups become topics.
 */
import { compoundStems, sameTopic, stem, topicKey, topicWords } from "./key.js";

/** One wording of a topic, with the segments that say it and when. */
export interface TopicAlias {
  topic: string;
  /** Ids of the segments that support it (duplicates are counted once). */
  segments: readonly string[];
  /** Epoch ms of its earliest and latest evidence. */
  firstSeen: number;
  lastSeen: number;
}

/** Aliases that name one topic, as one. */
export interface CanonicalTopic<A extends TopicAlias> {
  /** The most supported alias's wording (ties: the earliest seen, then the first in code order). */
  topic: string;
  /** The canonical alias's token key (`topicKey`, nothing joined). */
  key: string;
  /** Every alias, the canonical one first, then as the canonical one is chosen. */
  aliases: A[];
  /** The distinct segments of all aliases, sorted: a segment citing two aliases counts once. */
  segments: string[];
  firstSeen: number;
  lastSeen: number;
}

/**
 * Says which of a channel's distinct topics name the same thing, as pairs of topics to link. A
 * link is symmetric and merging is transitive over links (connected components), so the result
 * depends on the set of links only, never on the order they come in. An embeddings matcher
 * (cosine similarity above a setting) is one of these: it embeds the topics and computes its
 * links before merging (merging stays synchronous and pure), and should be a function of each
 * pair alone, as `tokenMatcher` is, for merging canonical topics again to link nothing new.
 */
export type TopicMatcher = (topics: readonly string[]) => Iterable<readonly [string, string]>;

/**
 * Links topics that `sameTopic` says are one, without comparing every pair: topics with equal
 * keys, and a topic with a compound its words could be joined into (`boot loader`) to the
 * topics that write it as one word (`bootloader`), checked by `sameTopic`. Linear in the topics
 * but for those compounds.
 */
export const tokenMatcher: TopicMatcher = function* (topics) {
  const firstOfKey = new Map<string, string>();
  const byStem = new Map<string, string[]>();
  for (const topic of topics) {
    const key = topicKey(topic);
    const first = firstOfKey.get(key);
    if (first === undefined) firstOfKey.set(key, topic);
    else yield [first, topic];
    for (const word of new Set(topicWords(topic).map(stem))) {
      const holders = byStem.get(word);
      if (holders === undefined) byStem.set(word, [topic]);
      else holders.push(topic);
    }
  }
  for (const topic of topics) {
    for (const compound of compoundStems(topic)) {
      for (const other of byStem.get(compound) ?? []) {
        if (other !== topic && sameTopic(topic, other)) yield [topic, other];
      }
    }
  }
};

const byCode = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

interface Ranked<A> {
  alias: A;
  distinct: number;
}

/** Most supported first, then the earliest seen, then code order: how the canonical is chosen. */
function compareAliases<A extends TopicAlias>(x: Ranked<A>, y: Ranked<A>): number {
  const [a, b] = [x.alias, y.alias];
  return (
    y.distinct - x.distinct ||
    a.firstSeen - b.firstSeen ||
    byCode(a.topic, b.topic) ||
    a.lastSeen - b.lastSeen ||
    byCode([...a.segments].sort().join("\n"), [...b.segments].sort().join("\n"))
  );
}

/**
 * Merges `aliases` into canonical topics: every alias lands in exactly one, the same one
 * whatever the order of `aliases`, and merging the result again changes nothing. Ordered most
 * supported first, then the earliest seen, then by name.
 */
export function mergeTopics<A extends TopicAlias>(
  aliases: readonly A[],
  matchers: readonly TopicMatcher[] = [tokenMatcher],
): CanonicalTopic<A>[] {
  const names = [...new Set(aliases.map((a) => a.topic))].sort(byCode);
  const parent = new Map(names.map((n) => [n, n]));
  const root = (name: string): string => {
    let r = name;
    while (parent.get(r) !== r) r = parent.get(r) as string;
    parent.set(name, r);
    return r;
  };
  for (const matcher of matchers) {
    for (const [a, b] of matcher(names)) {
      if (!parent.has(a) || !parent.has(b)) continue;
      const [ra, rb] = [root(a), root(b)];
      // The smaller name roots the component: union by name keeps it order-independent.
      if (ra !== rb) byCode(ra, rb) < 0 ? parent.set(rb, ra) : parent.set(ra, rb);
    }
  }
  const groups = new Map<string, Ranked<A>[]>();
  for (const alias of aliases) {
    const group = groups.get(root(alias.topic)) ?? [];
    group.push({ alias, distinct: new Set(alias.segments).size });
    groups.set(root(alias.topic), group);
  }
  const merged = [...groups.values()].map((group): CanonicalTopic<A> => {
    group.sort(compareAliases);
    const members = group.map((r) => r.alias);
    return {
      topic: members[0].topic,
      key: topicKey(members[0].topic),
      aliases: members,
      segments: [...new Set(members.flatMap((a) => a.segments))].sort(byCode),
      firstSeen: Math.min(...members.map((a) => a.firstSeen)),
      lastSeen: Math.max(...members.map((a) => a.lastSeen)),
    };
  });
  return merged.sort(
    (a, b) =>
      b.segments.length - a.segments.length ||
      a.firstSeen - b.firstSeen ||
      byCode(a.topic, b.topic),
  );
}
