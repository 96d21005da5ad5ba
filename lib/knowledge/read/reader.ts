import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { KnowledgeError } from "../errors.js";
import { QUESTION_STATUSES, type QuestionStatus } from "../extraction/index.js";
import { correctResult } from "../store/corrections.js";
import { DynamoDbResultStore } from "../store/dynamodb.js";
import type { ResultStore } from "../store/port.js";
import { isQuestionKey, type Question, questionPrefix } from "../store/question-entry.js";
import type { SegmentResult, TopicSupport } from "../store/schema/items.js";
import {
  DEFAULT_SIMILARITY,
  type Embedder,
  embeddingMatcher,
  embedTopics,
  mergeTopics,
  type TopicMatcher,
  tokenMatcher,
} from "../topics/index.js";
import { correctedPage } from "./corrected-page.js";

/** One segment's support for a topic: which messages say it. */
interface TopicEvidence {
  /** The alias this segment is evidence for, worded as most of the alias's segments said it. */
  topic: string;
  segmentId: string;
  candidateId: string;
  late: boolean;
  /** The first and last message of the evidence, or null when the model gave no range. */
  messageIds: [string, string] | null;
  /** The thread (its root's id) the evidence is in, when its segment is a thread's replies. */
  thread?: string;
  firstTs: number;
  lastTs: number;
  confidence: number;
}

/**
 * A channel's topic, merged over every segment that supports it and over its aliases: the
 * wordings whose token keys agree (`lib/knowledge/topics`), each as most segments said it.
 */
export interface Topic {
  /** The most supported alias (ties: the earliest seen, then code order). */
  topic: string;
  /** That alias's normalized topic, as its index entries carry it. */
  normalizedTopic: string;
  /** The other aliases, most supported first: empty when the topic was said one way only. */
  aliases: string[];
  /** How many distinct segments support it: a segment citing two aliases counts once. */
  segments: number;
  /** Epoch ms of the earliest and latest evidence. */
  firstSeen: number;
  lastSeen: number;
  /** Over all aliases, with its reason. */
  bestConfidence: number;
  bestReason: string;
  /** Every tag any support gave, in order of first appearance. */
  tags: string[];
  /** Oldest first. */
  evidence: TopicEvidence[];
}

/** Topics merged also by embeddings: what a deployment configures (`lib/knowledge/topics`' matcher). */
export interface TopicEmbeddings {
  embedder: Embedder;
  /** Cosine similarity at or above which two topics are one. Default {@link DEFAULT_SIMILARITY}. */
  similarity?: number;
  /** The most topics embedded per read (the most supported). Default 2,000. */
  maxTopics?: number;
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
  private readonly matchers: readonly TopicMatcher[] | undefined;
  private readonly embeddings: TopicEmbeddings | undefined;
  /** Vectors already asked for, by topic: a topic is embedded once per reader. */
  private readonly vectors = new Map<string, number[]>();

  /**
   * `matchers` say which wordings are one topic (default: the token key; `[]`: exact normalized
   * topics only); `embeddings` adds, to them, topics whose embeddings are similar enough.
   */
  constructor(
    options: ({ client: DynamoDBClient; tableName: string } | { store: ResultStore }) & {
      matchers?: readonly TopicMatcher[];
      embeddings?: TopicEmbeddings;
    },
  ) {
    this.store = "store" in options ? options.store : new DynamoDbResultStore(options);
    this.matchers = options.matchers;
    this.embeddings = options.embeddings;
  }

  /** The channel's topics, most supported first (then best confidence, then latest). */
  async topics(channel: string, options: { limit?: number } = {}): Promise<Topic[]> {
    const supports = await this.store.listSupports(channel);
    const topics = mergeSupports(supports, await this.matchersFor(supports));
    return options.limit === undefined ? topics : topics.slice(0, options.limit);
  }

  /** The matchers for `supports`: with embeddings, their vectors asked for first. */
  private async matchersFor(
    supports: readonly TopicSupport[],
  ): Promise<readonly TopicMatcher[] | undefined> {
    if (this.embeddings === undefined) return this.matchers;
    const counts = new Map<string, number>();
    for (const s of supports) counts.set(s.topic, (counts.get(s.topic) ?? 0) + 1);
    // The most supported are embedded first: past `maxTopics`, the rare ones go by tokens only.
    const ranked = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const vectors = await embedTopics(
      this.embeddings.embedder,
      ranked.map(([topic]) => topic),
      { maxTopics: this.embeddings.maxTopics, cache: this.vectors },
    );
    const similarity = this.embeddings.similarity ?? DEFAULT_SIMILARITY;
    return [...(this.matchers ?? [tokenMatcher]), embeddingMatcher(vectors, similarity)];
  }

  /**
   * A page of the channel's questions, oldest asked first, of one `status` or of all (then
   * answered, unanswered, unclear, each oldest first): at most `limit` (default
   * {@link DEFAULT_QUESTION_LIMIT}), and an opaque `cursor` for the next page, null at the end.
   * People's corrections win over the model's status and answer (`corrected`, `correction`): a
   * question moves to the status it was given, a hidden one is left out. A Query of the channel's
   * corrections, then one of the index per page (more when corrections moved entries out), and a
   * GetItem per result of a question moved in; `readUnits` counts the index's where reported.
   */
  async questions(
    channel: string,
    options: { status?: QuestionStatus; limit?: number; cursor?: string } = {},
  ): Promise<{ items: Question[]; cursor: string | null; readUnits?: number }> {
    const { status, cursor } = options;
    if (status !== undefined && !QUESTION_STATUSES.includes(status)) {
      throw new KnowledgeError(
        "KNOWLEDGE_BAD_QUESTION_STATUS",
        `questions: status must be one of ${QUESTION_STATUSES.join(", ")} (got ${JSON.stringify(String(status).slice(0, 40))})`,
      );
    }
    const limit = options.limit ?? DEFAULT_QUESTION_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_QUESTION_LIMIT) {
      throw new KnowledgeError(
        "KNOWLEDGE_BAD_QUESTION_LIMIT",
        `questions: limit must be a whole number from 1 to ${MAX_QUESTION_LIMIT} (got ${JSON.stringify(limit)})`,
      );
    }
    const after = cursor === undefined ? undefined : cursorKey(cursor, questionPrefix(status));
    const page = await correctedPage(
      this.store,
      channel,
      await this.store.listCorrections(channel),
      { ...(status !== undefined && { status }), limit, ...(after !== undefined && { after }) },
    );
    return {
      items: page.items,
      cursor: page.next === null ? null : Buffer.from(page.next).toString("base64url"),
      ...(page.readUnits !== undefined && { readUnits: page.readUnits }),
    };
  }

  result(channel: string, segmentId: string): Promise<SegmentResult | undefined> {
    return this.store.getResult(channel, segmentId);
  }

  /** Every stored result of the channel, in segment id order. */
  results(channel: string): Promise<SegmentResult[]> {
    return this.store.listResults(channel);
  }

  /**
   * {@link results} with people's corrections laid over their questions (`corrected`, hidden
   * ones left out): what a report or a digest of the results shows.
   */
  async correctedResults(channel: string): Promise<SegmentResult[]> {
    const [results, corrections] = await Promise.all([
      this.store.listResults(channel),
      this.store.listCorrections(channel),
    ]);
    return results.map((result) => correctResult(result, corrections));
  }
}

/** A questions page's size unless told. */
const DEFAULT_QUESTION_LIMIT = 50;
/** The most questions one page reads. */
export const MAX_QUESTION_LIMIT = 1000;

/**
 * The sort key a questions cursor stands for: base64url of a question entry's key under
 * `prefix` (the status asked for), else a {@link KnowledgeError} naming `cursor`.
 */
function cursorKey(cursor: string, prefix: string): string {
  const key = /^[A-Za-z0-9_-]{1,1400}$/.test(cursor)
    ? Buffer.from(cursor, "base64url").toString("utf8")
    : "";
  if (Buffer.from(key).toString("base64url") !== cursor || !isQuestionKey(key, prefix)) {
    throw new KnowledgeError(
      "KNOWLEDGE_BAD_CURSOR",
      "questions: cursor is not one a questions page of this status returned",
    );
  }
  return key;
}

/**
 * The topic index from its entries: grouped by normalized topic into aliases, the aliases that
 * name one topic merged (`matchers`: the token key unless told), ordered as `topics` says. The
 * same for the same entries in any order.
 */
export function mergeSupports(
  supports: readonly TopicSupport[],
  matchers?: readonly TopicMatcher[],
): Topic[] {
  const aliases = exactTopics(supports).map((topic) => ({
    topic: topic.topic,
    segments: topic.evidence.map((e) => e.segmentId),
    firstSeen: topic.firstSeen,
    lastSeen: topic.lastSeen,
    exact: topic,
  }));
  const topics = mergeTopics(aliases, matchers).map((merged): Topic => {
    const members = merged.aliases.map((a) => a.exact);
    const best = members.reduce((a, b) => (b.bestConfidence > a.bestConfidence ? b : a));
    const tags: string[] = [];
    for (const member of members)
      for (const tag of member.tags) if (!tags.includes(tag)) tags.push(tag);
    return {
      topic: merged.topic,
      normalizedTopic: members[0].normalizedTopic,
      aliases: members.slice(1).map((m) => m.topic),
      segments: merged.segments.length,
      firstSeen: merged.firstSeen,
      lastSeen: merged.lastSeen,
      bestConfidence: best.bestConfidence,
      bestReason: best.bestReason,
      tags,
      evidence: members.flatMap((m) => m.evidence).sort(byEvidence),
    };
  });
  return topics.sort(
    (a, b) =>
      b.segments - a.segments ||
      b.bestConfidence - a.bestConfidence ||
      b.lastSeen - a.lastSeen ||
      byCode(a.normalizedTopic, b.normalizedTopic),
  );
}

const byCode = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const byEvidence = (a: TopicEvidence, b: TopicEvidence): number =>
  a.firstTs - b.firstTs ||
  byCode(a.segmentId, b.segmentId) ||
  byCode(a.topic, b.topic) ||
  byCode(a.candidateId, b.candidateId);

/**
 * The wording most segments said, of one topic's evidence as said (ties: the surest, then the
 * earliest seen): one segment's "PAYMENTINTENT" does not name what a dozen wrote "PaymentIntent".
 */
function mostSaid(evidence: readonly TopicEvidence[]): string {
  const said = new Map<string, { segments: Set<string>; confidence: number }>();
  for (const e of evidence) {
    const wording = said.get(e.topic) ?? { segments: new Set<string>(), confidence: 0 };
    said.set(e.topic, wording);
    wording.segments.add(e.segmentId);
    wording.confidence = Math.max(wording.confidence, e.confidence);
  }
  let best: string | undefined;
  let most = 0;
  let surest = 0;
  for (const [wording, { segments, confidence }] of said) {
    if (
      best === undefined ||
      segments.size > most ||
      (segments.size === most && confidence > surest)
    ) {
      [best, most, surest] = [wording, segments.size, confidence];
    }
  }
  return best as string;
}

/**
 * One topic per normalized topic, its entries in a fixed order first so that the wording and
 * tags chosen do not depend on the order the store lists them in.
 */
function exactTopics(supports: readonly TopicSupport[]): Omit<Topic, "aliases">[] {
  const ordered = [...supports].sort(
    (a, b) =>
      a.firstTs - b.firstTs ||
      byCode(a.segmentId, b.segmentId) ||
      byCode(a.candidateId, b.candidateId) ||
      byCode(a.topic, b.topic),
  );
  const byTopic = new Map<string, Omit<Topic, "aliases">>();
  for (const support of ordered) {
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
    }
    for (const tag of support.tags) if (!topic.tags.includes(tag)) topic.tags.push(tag);
    topic.evidence.push({
      topic: support.topic,
      segmentId: support.segmentId,
      candidateId: support.candidateId,
      late: support.late,
      messageIds: support.messageIds,
      ...(support.thread === undefined ? {} : { thread: support.thread }),
      firstTs: support.firstTs,
      lastTs: support.lastTs,
      confidence: support.confidence,
    });
  }
  for (const topic of byTopic.values()) {
    topic.topic = mostSaid(topic.evidence);
    // An alias's evidence says the alias as its topic does.
    for (const e of topic.evidence) e.topic = topic.topic;
  }
  return [...byTopic.values()];
}
