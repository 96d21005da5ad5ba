/**
 * The items of the results table: a public, versioned contract (v1) for readers outside this
 * codebase (docs/contracts/results-table-v1.md). A channel's items share its partition (`channel`);
 * its sort key (`item`) says what it is:
 *
 * - `result#<segmentId>`: one segment's extraction result, the source of truth;
 * - `topic#<topicKey>#<segmentId>`: the topic index, one entry per topic per segment (so that a
 *   redelivered or re-extracted segment overwrites its own entries and never counts twice);
 * - `window#<hash>`: a window's accepted model reply, reused by retries (expires);
 * - `span#<lastTs>#<segmentId>` (`span#late#…` for a late segment) and `spanwidths`: where each
 *   segment's messages lie in time, so that an edited or deleted message's result is found;
 * - `lease#<segmentId>`: the in-flight lease of an extraction, what failed attempts spent, and
 *   how many attempts failed (`attempts`: the consumer's own count, which gives up on a segment);
 * - `spend#<day>`: the tokens extraction spent on the channel's segments that UTC day (`tokens`,
 *   expires); the deployment's total is the same item in the partition {@link DEPLOYMENT_PARTITION};
 * - the channel's term statistics, per vocabulary (the offline extractor's way of making terms):
 *   `terms#<vocabulary>`, how many segments were counted; `term#<vocabulary>#<termKey>`, in how
 *   many of them one term occurs; `termlog#<vocabulary>#<segmentId>#<chunk>`, which terms a
 *   segment counted (so that a retry or a re-extraction never counts them twice);
 * - `erasure#<authorKey>#<requestedAt>`, in the deployment's partition: an erasure's audit item.
 *
 * What each kind holds of a person and how it is redacted and erased: `../../kinds.ts`.
 * Fields may be added within v1 and readers ignore fields they do not know.
 */
import { createHash } from "node:crypto";
import {
  type Candidate,
  NO_CALLS,
  type QuestionStatus,
  type TrimmedField,
  type WindowUsage,
} from "../../extraction/index.js";

export const SCHEMA_VERSION = 1;

/** Every LLM call and token a segment cost, over all its attempts. */
export type SegmentUsage = WindowUsage;

/** A candidate as stored: with its stable id and its evidence as message ids. */
export interface StoredCandidate {
  /** Stable: a hash of the segment id and the normalized topic. */
  id: string;
  topic: string;
  reason: string;
  confidence: number;
  tags: string[];
  subjective: boolean;
  wikiWorthy?: boolean;
  /** Indexes into the segment's messages (first, last), or null when the model gave none. */
  turnRange: [number, number] | null;
  /** The first and last message of `turnRange`, or null without a range. */
  messageIds: [string, string] | null;
  /**
   * How many people wrote the evidence (`turnRange`'s messages but system lines): one author's
   * claim reads 1, a corroborated one more; `confidence` and `wikiWorthy` are the model's opinion.
   * Absent without a range.
   */
  authorCount?: number;
  /** Those authors, distinct, in order of first message: at most {@link MAX_STORED_AUTHORS}. */
  authors?: string[];
}

/** A question as stored: with its stable id and its messages as ids. */
export interface StoredQuestion {
  /** Stable: a hash of the segment id, the asking message id and the normalized question. */
  id: string;
  question: string;
  status: QuestionStatus;
  /** The asking message. */
  askedId: string;
  askedTs: number;
  /** The asking message's author, when it has one. */
  askedBy?: string;
  /** Summarized; absent when there is none. */
  answer?: string;
  /** The answering messages, in segment order. */
  answerIds: string[];
}

/**
 * One question index entry (`question#<status>#<askedTs, 13 digits>#<segmentId>#<questionId>`):
 * a question of one segment, owned by it like a topic entry, so that redelivery and
 * re-extraction never count it twice; a channel's questions of one status are one Query, oldest
 * first.
 */
export interface QuestionEntry extends StoredQuestion {
  v: 1;
  channel: string;
  segmentId: string;
  late: boolean;
  /** Its segment's thread (root id) when the segment is a thread's replies. */
  thread?: string;
  /** Its result's `expiresAt`: an entry goes with its result. */
  expiresAt?: number;
  /** The `extractedAt` of the result it belongs to. */
  extractedAt: string;
}

/** Authors named per candidate; `authorCount` counts them all. */
export const MAX_STORED_AUTHORS = 20;

/**
 * What the bounds cut from a result, by what was cut (`lib/knowledge/extraction`'s fields, and the result
 * item's own: `messageIds`, the list left out, `oversizeQuestions` and `oversizeCandidates`,
 * questions and candidates dropped, to fit DynamoDB's 400 KB item limit). Only what was cut
 * appears; absent when nothing was.
 */
export type ResultTrimmed = Partial<
  Record<TrimmedField | "messageIds" | "oversizeQuestions" | "oversizeCandidates", number>
>;

/** What an earlier result of the segment was, when this one replaced it. */
interface ReplacedResult {
  model: string;
  promptVersion: string;
  extractedAt: string;
}

export interface SegmentResult {
  v: 1;
  channel: string;
  segmentId: string;
  late: boolean;
  belongsAfter: string | null;
  /**
   * The root id of the thread whose replies the segment is (added within v1; absent for the
   * channel's own stream): the result is the channel's, the thread kept for evidence and links.
   */
  thread?: string;
  /** The segment's messages: count and bounds (epoch ms). */
  count: number;
  first: { id: string; ts: number };
  last: { id: string; ts: number };
  /**
   * Every message of the segment, in segment order; absent when the item would not fit
   * DynamoDB's limit with them (`trimmed.messageIds`): `first`, `last` and `count` bound it then.
   */
  messageIds?: string[];
  model: string;
  promptVersion: string;
  /** ISO 8601. */
  extractedAt: string;
  usage: SegmentUsage;
  candidates: StoredCandidate[];
  /** The segment's questions (added within v1; absent on results extracted before them). */
  questions?: StoredQuestion[];
  replaced?: ReplacedResult;
  trimmed?: ResultTrimmed;
  /**
   * Epoch seconds after which DynamoDB's TTL deletes the result (with a result retention): its
   * first message's time plus the retention, so that it never outlives the messages it cites.
   */
  expiresAt?: number;
  /**
   * The `window#` hashes of the replies this segment's attempts stored or reused, so that a
   * redaction can delete them (they may quote a message); emptied when it has. Absent on results
   * written before window tracking.
   */
  windows?: string[];
  /**
   * For each message of the result whose text was edited, the `editedAt` of the version the
   * result accounts for (seen at extraction, or redacted since). Absent when none was.
   */
  edits?: Record<string, number>;
  /** The messages edited since extraction (still in `messageIds`). */
  editedSince?: string[];
  /** How many of its messages were deleted since extraction (`count` is what is left). */
  deletedSince?: number;
  /**
   * Messages edited or deleted since extraction, each once: `reextractChangedShare` is a share
   * of the messages extracted (`count` plus `deletedSince`).
   */
  changedMessages?: number;
  /** A re-extraction was asked for and the request is not yet known to be sent. */
  reextractPending?: boolean;
  /** How many redactions changed the item: the version a redaction writes against. */
  redactions?: number;
}

/**
 * Where a segment's messages lie in time, so that a changed message's segment is found from its
 * timestamp: `span#<lastTs>#<segmentId>` for a segment on time, `span#late#<lastTs>#<segmentId>`
 * for a late one (late segments overlap the others in time). No message id, no text.
 */
export interface SegmentSpan {
  v: 1;
  segmentId: string;
  late: boolean;
  firstTs: number;
  lastTs: number;
}

/** The widest span of each kind of segment in a channel: how far above a time a lookup reads. */
export interface SpanWidths {
  onTime: number;
  late: number;
}

/** One topic index entry: a candidate of one segment, with when its evidence was said. */
export interface TopicSupport {
  v: 1;
  channel: string;
  topic: string;
  normalizedTopic: string;
  segmentId: string;
  candidateId: string;
  late: boolean;
  confidence: number;
  reason: string;
  tags: string[];
  messageIds: [string, string] | null;
  /**
   * Its segment's thread (root id) when the segment is a thread's replies: the entry is in the
   * channel's topic index like any, and says where its evidence is (added within v1).
   */
  thread?: string;
  /** Epoch ms of the evidence's first and last message (the segment's bounds without a range). */
  firstTs: number;
  lastTs: number;
  /** Its result's `expiresAt`: an entry goes with its result. */
  expiresAt?: number;
  /** The `extractedAt` of the result it belongs to (absent on entries written before it was). */
  extractedAt?: string;
}

export const RESULT_PREFIX = "result#";
export const TOPIC_PREFIX = "topic#";
export const QUESTION_PREFIX = "question#";
export const WINDOW_PREFIX = "window#";
export const LEASE_PREFIX = "lease#";
export const SPEND_PREFIX = "spend#";
export const SPAN_PREFIX = "span#";
const LATE_SPAN_PREFIX = `${SPAN_PREFIX}late#`;
/** The channel's {@link SpanWidths}: `onTimeWidth` and `lateWidth`, epoch ms. */
export const SPAN_WIDTHS_KEY = "spanwidths";
/**
 * The partition of the deployment's own items (its daily token spend): a leading space, which
 * no channel or conversation id may have.
 */
export const DEPLOYMENT_PARTITION = " deployment";

/**
 * The audit items of erasures (`lib/lifecycle/erasure`), in {@link DEPLOYMENT_PARTITION}:
 * `erasure#<authorKey>#<requestedAt>`.
 */
export const ERASURE_AUDIT_PREFIX = "erasure#";

export const TERMS_PREFIX = "terms#";
export const TERM_PREFIX = "term#";
export const TERM_LOG_PREFIX = "termlog#";

export const resultItemKey = (segmentId: string) => `${RESULT_PREFIX}${segmentId}`;
export const leaseItemKey = (segmentId: string) => `${LEASE_PREFIX}${segmentId}`;
export const windowItemKey = (hash: string) => `${WINDOW_PREFIX}${hash}`;
/** Epoch ms as 16 digits, so that spans sort by time. */
const timeKey = (ts: number) => String(Math.max(0, Math.trunc(ts))).padStart(16, "0");

export function spanItemKey(span: Pick<SegmentSpan, "late" | "lastTs" | "segmentId">): string {
  return `${span.late ? LATE_SPAN_PREFIX : SPAN_PREFIX}${timeKey(span.lastTs)}#${span.segmentId}`;
}

/**
 * The sort key range (inclusive) of the spans of one kind whose last message is at `from` to
 * `to` epoch ms: a segment holding a message at `t` ends at `t` at the earliest and at `t` plus
 * the widest span of its kind at the latest.
 */
export function spanKeyRange(late: boolean, from: number, to: number): [string, string] {
  const prefix = late ? LATE_SPAN_PREFIX : SPAN_PREFIX;
  // Keys are `<prefix><16 digits>#…`: the bare prefix of `to + 1` sorts after every key of `to`.
  return [`${prefix}${timeKey(from)}`, `${prefix}${timeKey(to + 1)}`];
}

/** A result's span: what its `span#` item holds. */
export function spanOf(result: SegmentResult): SegmentSpan {
  return {
    v: 1,
    segmentId: result.segmentId,
    late: result.late,
    firstTs: result.first.ts,
    lastTs: result.last.ts,
  };
}

/** A UTC day's spend item: `spend#2026-01-31`. */
export const spendItemKey = (day: string) => `${SPEND_PREFIX}${day}`;

/**
 * The index entry's key: topics group together in sort order under a fixed-length hash of the
 * normalized topic (a topic may be longer than a sort key may be).
 */
export function supportItemKey(normalizedTopic: string, segmentId: string): string {
  return `${TOPIC_PREFIX}${sha256(normalizedTopic).slice(0, 16)}#${segmentId}`;
}

/** A vocabulary name as it may stand in a sort key: `offline-2`, say. */
const VOCABULARY = /^[a-z0-9][a-z0-9.-]{0,31}$/;

function checkVocabulary(vocabulary: string): string {
  if (!VOCABULARY.test(vocabulary)) {
    throw new RangeError(
      `vocabulary must be 1 to 32 lower-case letters, digits, dots and dashes (got ${JSON.stringify(vocabulary.slice(0, 40))})`,
    );
  }
  return vocabulary;
}

/** The item that counts a vocabulary's segments in a channel. */
export const termsHeadKey = (vocabulary: string) => `${TERMS_PREFIX}${checkVocabulary(vocabulary)}`;

/** One term's item: the term itself is chat text, so the key holds a fixed-length hash of it. */
export function termItemKey(vocabulary: string, term: string): string {
  return `${TERM_PREFIX}${checkVocabulary(vocabulary)}#${sha256(term).slice(0, 32)}`;
}

/** Where a segment's counted chunks of terms are logged: one item per chunk. */
export function termLogPrefix(vocabulary: string, segmentId: string): string {
  return `${TERM_LOG_PREFIX}${checkVocabulary(vocabulary)}#${segmentId}#`;
}

export function termLogKey(vocabulary: string, segmentId: string, chunk: number): string {
  return `${termLogPrefix(vocabulary, segmentId)}${String(chunk).padStart(3, "0")}`;
}

/**
 * Terms counted in one write: with the chunk's log item and the segment count, one DynamoDB
 * transaction (at most 100 actions).
 */
const TERMS_PER_CHUNK = 98;

/**
 * A segment's distinct terms in sort order, cut into the chunks counted one transaction each;
 * always at least one chunk (the first also counts the segment), empty when it has no terms.
 */
export function termChunks(terms: readonly string[]): string[][] {
  const sorted = [...new Set(terms)].sort();
  const chunks: string[][] = [];
  for (let i = 0; i === 0 || i < sorted.length; i += TERMS_PER_CHUNK) {
    chunks.push(sorted.slice(i, i + TERMS_PER_CHUNK));
  }
  return chunks;
}

/** A logged chunk of a segment's counted terms; chunk 0 also counted the segment. */
export interface TermLogEntry {
  v: 1;
  segmentId: string;
  chunk: number;
  terms: string[];
}

/** A candidate's stable id: the same topic of the same segment always gets the same id. */
function candidateId(segmentId: string, normalizedTopic: string): string {
  return sha256(`${segmentId}\0${normalizedTopic}`).slice(0, 32);
}

/** The key of a window's stored reply: what was asked, of which model, under which prompts. */
export function windowHash(promptVersion: string, model: string, prompt: string): string {
  return sha256(`${promptVersion}\0${model}\0${prompt}`);
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

export function sumUsage(...parts: readonly SegmentUsage[]): SegmentUsage {
  const total = { ...NO_CALLS };
  for (const part of parts) {
    total.calls += part.calls;
    total.inputTokens += part.inputTokens;
    total.outputTokens += part.outputTokens;
    total.cacheReadTokens += part.cacheReadTokens;
    total.cacheWriteTokens += part.cacheWriteTokens;
  }
  return total;
}

/** The stored form of the analyzer's candidates; blank topics cannot be indexed and are left out. */
export function storedCandidates(
  segmentId: string,
  candidates: readonly Candidate[],
  messages: readonly { id: string; author?: string; kind?: string }[],
  normalize: (topic: string) => string,
): StoredCandidate[] {
  const stored: StoredCandidate[] = [];
  for (const candidate of candidates) {
    const normalized = normalize(candidate.topic);
    if (normalized === "") continue;
    // The analyzer maps every range into the turns it was given: one per message.
    const range = candidate.turnRange;
    const entry: StoredCandidate = {
      id: candidateId(segmentId, normalized),
      topic: candidate.topic,
      reason: candidate.reason,
      confidence: candidate.confidence,
      tags: candidate.tags,
      subjective: candidate.subjective,
      turnRange: range,
      messageIds: range === null ? null : [messages[range[0]].id, messages[range[1]].id],
    };
    if (candidate.wikiWorthy !== undefined) entry.wikiWorthy = candidate.wikiWorthy;
    if (range !== null) {
      const authors = new Set<string>();
      for (const message of messages.slice(range[0], range[1] + 1)) {
        if (message.kind !== "system" && message.author) authors.add(message.author);
      }
      entry.authorCount = authors.size;
      entry.authors = [...authors].slice(0, MAX_STORED_AUTHORS);
    }
    stored.push(entry);
  }
  return stored;
}
