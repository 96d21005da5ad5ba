/**
 * What the handler reads, as small ports: each call is one bounded read (one Query, Scan or
 * GetItem on DynamoDB: `dynamodb.ts`), so that the number of reads a request costs is fixed by
 * the route, whatever the channel holds; `describe` is three, and `topicIndex`, which ranks
 * topics, reads up to a bound.
 */

import type { HealthMessage } from "../../knowledge/health/index.js";
import type { CorrectionNote, SegmentResult, TopicSupport } from "../../knowledge/store/index.js";
import type { Digest } from "../digest/index.js";
import type { SearchHit, SearchQuery } from "../search/index.js";
import type { ApiQuestion, CorrectionBody, QuestionStatus } from "./schemas.js";

/** Where a channels page starts: the last key a bounded scan evaluated. */
export type ChannelsPosition = { channel: string; item: string };

interface ChannelsRead {
  /** In the order read: a page cut after any of them goes on from its marks item. */
  channels: string[];
  /** Where the next read starts, or null when the table was read to its end. */
  next: ChannelsPosition | null;
}

/**
 * What the channel list says of a channel besides its id, from its first and latest arrivals
 * and its kept count; null where none of them says.
 */
export interface ChannelFacts {
  /** The `channelName` its latest arrivals carry (its name now, when it was renamed). */
  name: string | null;
  platform: string | null;
  /** When its first and its latest kept message to arrive were sent (epoch ms). */
  first: number | null;
  last: number | null;
  /**
   * How many messages it keeps (deleted and erased ones not), as counted from the messages
   * table's stream; null where no count is kept (a channel from before the count).
   */
  messages: number | null;
}

/** One topic index entry with its `topicKey` (the 16 hex digits of its sort key). */
export interface KeyedSupport {
  topicKey: string;
  support: TopicSupport;
}

export interface TopicEntriesRead {
  /** In sort key order: a topic's entries are adjacent. */
  entries: KeyedSupport[];
  /** True when entries may follow the last one returned (the read stopped at a limit). */
  more: boolean;
}

/** The questions index, as `KnowledgeReader.questions` (lib/knowledge) pages it: one Query. */
export interface QuestionsSource {
  questions(
    channel: string,
    options: { status?: QuestionStatus; limit?: number; cursor?: string },
  ): Promise<{ items: ApiQuestion[]; cursor: string | null; readUnits?: number }>;
}

/**
 * A channel's digest over a period, as lib/outlets/digest's `buildDigest` makes it. Not one read: it reads
 * the channel's results and index entries within the period, which the route caps in length.
 */
/** Where a correction is recorded: a deployment's write function, or `serve`'s workspace. */
export interface CorrectionsSource {
  /** Throws lib/knowledge's `CorrectionError` for a bad field or a question not in the channel. */
  correct(
    request: { channel: string; questionId: string } & CorrectionBody,
  ): Promise<{ correction: CorrectionNote; question: ApiQuestion | undefined }>;
}

interface DigestSource {
  digest(channel: string, period: { since: number; until: number }): Promise<Digest>;
}

export interface ApiSources {
  /** At most `evaluate` items of the channels table from `after` (one bounded read). */
  channels(options: { after: ChannelsPosition | null; evaluate: number }): Promise<ChannelsRead>;
  /**
   * At most `limit` topic index entries, and the one after them when there is one, of `channel` whose topic key sorts after `afterTopicKey`
   * (all of that key's entries skipped), in sort key order: one Query.
   */
  topicEntries(
    channel: string,
    options: { afterTopicKey: string | null; limit: number },
  ): Promise<TopicEntriesRead>;
  /**
   * A channel's {@link ChannelFacts}: two bounded Queries of its arrivals, first and latest, and
   * one GetItem of its count.
   */
  describe(channel: string): Promise<ChannelFacts>;
  /**
   * The first `max` topic index entries of `channel`, in sort key order, and whether more
   * follow: Query pages until `max` (all of a channel's index up to that bound).
   */
  topicIndex(channel: string, options: { max: number }): Promise<TopicEntriesRead>;
  /**
   * Whether anything of `channel` is kept: its channels table item (the pipeline took a message
   * of it) or, for an imported conversation, which has none, an item in the results table. One
   * GetItem, and a Query of one key when it finds nothing: asked only of an empty page.
   */
  known(channel: string): Promise<boolean>;
  /** One segment's result: one GetItem. */
  segment(channel: string, segmentId: string): Promise<SegmentResult | undefined>;
  /** Absent where the sources have no questions index: the route answers 501. */
  questions?: QuestionsSource;
  /**
   * Absent where the API may not write (the deployed read function): the correction route
   * answers 501 there; a deployment serves it from a function of its own.
   */
  corrections?: CorrectionsSource;
  /** Absent until digests are wired: the route answers 501. */
  digest?: DigestSource;
  /** Absent where no search index is kept (a deployment without the search setting): 501. */
  search?: SearchSource;
  /** Absent where the sources cannot read results and messages for it: the stats route answers 501. */
  stats?: StatsSource;
}

/** What `GET /channels/{c}/stats` reads besides the questions index. */
export interface StatsSource {
  /** When each of the channel's conversations (its results' first message) within [since, until) began. */
  conversations(channel: string, period: { since: number; until: number }): Promise<number[]>;
  /** The channel's messages with these ids: when, by whom; ids not stored and deleted ones left out. */
  messages(channel: string, ids: readonly string[]): Promise<HealthMessage[]>;
}

/** A search index: the hits of a checked query, best first, `limit` from `offset` on. */
export interface SearchSource {
  search(query: SearchQuery): Promise<SearchHit[]>;
}

/** The sources a deployment may lack, given alike to the DynamoDB and the memory sources. */
export type OptionalSources = Pick<
  ApiSources,
  "questions" | "digest" | "search" | "stats" | "corrections"
>;
