/**
 * The data a report page embeds: made by {@link buildReportData} in Node, read by the page's
 * script in the browser. Plain JSON (no Maps, no typed arrays) and columnar where it is large,
 * because a channel can hold hundreds of thousands of messages.
 */
import type { ChannelHealth } from "../../knowledge/health/index.js";
import type { Digest, DigestQuestion } from "../digest/index.js";

/** How a segment was cut from what came before it in its channel. */
export type CutCause =
  /** The channel's first segment: nothing came before. */
  | "start"
  /** The silence before it was longer than `settle`: a new conversation. */
  | "silence"
  /** Its conversation ran over the size cap and was cut at its largest gap. */
  | "size"
  /** Its messages arrived after the segment they belong after had been delivered. */
  | "late";

/** A message's segment index in {@link MessageColumns.segment} when it is in no segment. */
export const OPEN = -1;
export const DROPPED = -2;

/** In {@link MessageColumns.replyTo}: the message answers one that the input does not have. */
export const NOT_IN_INPUT = -2;

export interface Usage {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface TopicData {
  topic: string;
  reason: string;
  confidence: number;
  tags: string[];
  subjective: boolean;
  wikiWorthy?: boolean;
  /**
   * The evidence: first and last index into the segment's messages in segment order, or null
   * when the model gave no range (or named messages that are not in the segment).
   */
  range: [number, number] | null;
}

export interface ExtractionData {
  model: string;
  promptVersion: string;
  usage: Usage;
  topics: TopicData[];
}

export interface SegmentData {
  id: string;
  /** Epoch ms of the first and last message. */
  first: number;
  last: number;
  count: number;
  cut: CutCause;
  /**
   * The silence the cut fell in: from the channel's previous message outside late segments to
   * this segment's first (without the input messages: from the previous segment's last). Null
   * for the first segment and for late ones.
   */
  gapMs: number | null;
  /** Of a late segment: the index (in its channel) of the segment it belongs after. */
  belongsAfter: number | null;
  /** The id `belongsAfter` named, kept when no segment of the channel has it. */
  belongsAfterId: string | null;
  /** Its message ids that the input messages do not have (0 without the input). */
  missing: number;
  /** Without the input messages, its message ids; with them, the page finds its messages. */
  messageIds?: string[];
  /** Null when the segment was not extracted (or no candidates were given). */
  extraction: ExtractionData | null;
  /**
   * Of a thread's segment, or a linked conversation's: its index in its channel's `threads`;
   * absent for the channel's own.
   */
  thread?: number;
}

/**
 * A stream of a channel segmented on its own: a thread (its replies; a segment is the thread's
 * when its line names the thread, `thread`, else when all its messages are replies in it), or
 * with `linked` a conversation the reply linker found among the channel's own messages (a
 * segment is the conversation's when its line names it, `conversation`).
 */
export interface ThreadData {
  /** The id of the thread's root message; of a linked conversation, of its first message. */
  root: string;
  /** A linked conversation (`linked` mode), not a platform thread. */
  linked?: true;
  /** Of a linked conversation: epoch ms of its first message (else of its first segment). */
  start?: number;
  /**
   * The root's author, when the segment line's `threadRoot` or the input messages name one; of a
   * linked conversation, of its first message that is more than a greeting.
   */
  author?: string;
  /**
   * The start of the root's text (at most {@link THREAD_EXCERPT} characters), when known; of a
   * linked conversation, of the message `author` wrote.
   */
  excerpt?: string;
  /** Its segments (indexes into the channel's `segments`), in delivery order. */
  segments: number[];
}

/** How much of a thread root's text labels the thread. */
export const THREAD_EXCERPT = 60;

/** A channel's messages in channel order (timestamp, then id), one array per field. */
export interface MessageColumns {
  /** The first message's epoch ms, then each message's difference to the one before (>= 0). */
  tsDelta: number[];
  id: string[];
  /** Index into `users`, or -1 when the message names none. */
  user: number[];
  users: string[];
  /** Index of the message's segment in the channel's `segments`, or {@link OPEN} or {@link DROPPED}. */
  segment: number[];
  /**
   * The channel position of the message each answers (its `replyTo`, else its thread's root, else
   * the parent the reply linker inferred: see `inferred`), -1
   * for none, {@link NOT_IN_INPUT} for one the input does not have; absent when no message of the
   * channel answers one.
   */
  replyTo?: number[];
  /**
   * 1 where `replyTo` is a link the reply linker inferred (`inferredReplyTo`), 0 where it is the
   * platform's (`replyTo`, a thread) or none; absent when no link is inferred.
   */
  inferred?: number[];
  /** Each message's kind, 0 a person's, 1 a bot's, 2 a system line; absent when all are people's. */
  kind?: number[];
}

interface ChannelCounts {
  /** Input messages (without them: the messages of the channel's segments). */
  messages: number;
  segments: number;
  lateSegments: number;
  /** Messages of the still open trailing conversation that are in no segment: withheld. */
  open: number;
  /** Earlier messages that are in no segment: below `minItems`, or never stored. */
  dropped: number;
  /** Segment message ids the input messages do not have. */
  missing: number;
  topics: number;
}

/**
 * A topic of a channel, merged over the segments whose extraction found it and over its
 * wordings, as the topic index merges them: what the report's first screen lists.
 */
export interface ChannelTopic {
  /** Its most supported wording (ties: the earliest, then code order). */
  topic: string;
  /** Its other wordings (`lib/knowledge/topics` merges them), most supported first; empty: said one way. */
  aliases: string[];
  /**
   * The segments that support it, oldest first: `[segment, topic]`, the segment's index in the
   * channel's `segments` and the topic's index in that segment's `extraction.topics`.
   */
  supports: [number, number][];
  /** Epoch ms of the earliest and latest evidence (a segment's bounds where it has no range). */
  first: number;
  last: number;
  bestConfidence: number;
}

export interface ChannelData {
  /** The channel's id. */
  name: string;
  /** Its display name (`channelName`) as its latest message that has one says; absent: none. */
  displayName?: string;
  /** The generated sample's (`run` without `--input`), listed after the user's own channels. */
  sample?: true;
  counts: ChannelCounts;
  /** What its conversations were about: most supported first (then best confidence, latest). */
  topics: ChannelTopic[];
  /** In delivery order: a segment's number in the page is its index + 1. */
  segments: SegmentData[];
  /**
   * Its threads with segments of their own, in the order their first segment was delivered, then
   * its linked conversations (`linked`) in the order they started.
   */
  threads: ThreadData[];
  /** Null without the input messages. */
  messages: MessageColumns | null;
}

/** Segments by message count: bucket `i` holds counts from `from` to `to`, both included. */
interface SizeBucket {
  from: number;
  to: number;
  segments: number;
}

export interface SizeDistribution {
  buckets: SizeBucket[];
  min: number;
  median: number;
  p90: number;
  max: number;
}

export interface ExtractionSummary {
  segments: number;
  topics: number;
  usage: Usage;
  models: string[];
  promptVersions: string[];
  /** Candidate lines whose segment is not among the segments: left out. */
  unmatched: number;
}

export interface ReportSummary {
  channels: number;
  /** The linked conversations of all channels (`linked` mode); absent when there are none. */
  conversations?: number;
  /** Null without the input messages. */
  messages: number | null;
  segments: number;
  lateSegments: number;
  /** Messages in late segments. */
  lateMessages: number;
  inSegments: number;
  open: number;
  dropped: number;
  missing: number;
  sizes: SizeDistribution | null;
  /** Null when no candidates were given. */
  extraction: ExtractionSummary | null;
}

/**
 * The messages' texts, per channel (in the order of `ReportData.channels`) in channel order, ""
 * for none. Kept apart from {@link ReportData} because they are most of a report's bytes: the page
 * embeds them after its script, and draws before the browser has even read them.
 */
export type ReportTexts = string[][];

export interface Report {
  data: ReportData;
  texts: ReportTexts;
}

/**
 * The questions of the extracted segments (oldest first; at most `REPORT_QUESTIONS` of each list,
 * the rest counted) and a digest of the data's last seven UTC days, null without data.
 */
export interface ReportKnowledge {
  questions: {
    unanswered: DigestQuestion[];
    unclear: DigestQuestion[];
    answered: DigestQuestion[];
    omitted: { unanswered: number; unclear: number; answered: number };
  };
  /**
   * Recurring questions of all the channels (added within v1): asked by the most people first,
   * each linked by its latest asking (`inPeriod` is `count`: the report's period is all of it); the
   * rest counted.
   */
  faq: { entries: NonNullable<Digest["faq"]>; omitted: number };
  digest: Digest | null;
  /**
   * Each channel's health over all of its data (added within v1; absent from reports made before
   * it): the totals as lib/knowledge/health counts them, and per bucket (`bucket`: day, or week
   * over more than 92 days) one number per array, in the order of `starts`.
   */
  health?: ChannelHealthData[];
}

export type ChannelHealthData = Omit<ChannelHealth, "buckets"> & {
  channel: string;
  /** Each bucket's first instant, epoch ms. */
  starts: number[];
  perBucket: {
    questions: number[];
    answered: number[];
    /** Conversations (segments) that began in the bucket. */
    conversations: number[];
    /** Time to first answer over the bucket's answered questions, null where none was measured. */
    medianMs: (number | null)[];
    p90Ms: (number | null)[];
  };
};

export interface ReportData {
  v: 1;
  /** Epoch ms. */
  generatedAt: number;
  settleMs: number;
  /** Where the data came from, as shown in the header (e.g. `segments` → a file name). */
  sources: { label: string; value: string }[];
  summary: ReportSummary;
  channels: ChannelData[];
  /** Questions and the digest (added within v1: absent from reports made before them). */
  knowledge?: ReportKnowledge;
}
