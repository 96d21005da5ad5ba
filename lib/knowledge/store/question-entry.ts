/**
 * The question index: one entry per question per segment, derived from a result's `questions`
 * wherever a result is written or redacted, so that the two never disagree on an entry's fields
 * or key. Keys sort by status, then by when the question was asked: a channel's unanswered
 * questions, oldest first, are one Query.
 */

import { QUESTION_STATUSES, type QuestionStatus } from "../extraction/index.js";
import type { CorrectionNote } from "./corrections.js";
import { QUESTION_PREFIX, type QuestionEntry, type SegmentResult } from "./schema/items.js";

/** A channel's question as readers see it (the read API's `Question`). */
export interface Question {
  /** Stable within its segment: what a correction names (`questions mark`). */
  id: string;
  /** In the asker's words, shortened. */
  question: string;
  /** The asking message. */
  askedId: string;
  /** Epoch ms. */
  askedTs: number;
  askedBy?: string;
  status: QuestionStatus;
  /** Summarized; absent when there is none. */
  answer?: string;
  /** The answering messages, in segment order. */
  answerIds: string[];
  segmentId: string;
  /** The thread (its root's id) it was asked in, when its segment is a thread's replies. */
  threadId?: string;
  /** A person corrected the model's status or answer: what they said, when, and who. */
  corrected?: true;
  correction?: CorrectionNote;
}

/** Epoch ms as 13 digits (good until the year 2286), so that entries sort by age. */
const askedKey = (ts: number) => String(Math.max(0, Math.trunc(ts))).padStart(13, "0");

/** The sort key prefix of a channel's questions of `status`, or of all of them. */
export function questionPrefix(status?: QuestionStatus): string {
  return status === undefined ? QUESTION_PREFIX : `${QUESTION_PREFIX}${status}#`;
}

/** `question#<status>#<askedTs, 13 digits>#<segmentId>#<questionId>`. */
export function questionItemKey(
  entry: Pick<QuestionEntry, "status" | "askedTs" | "segmentId" | "id">,
): string {
  return `${questionPrefix(entry.status)}${askedKey(entry.askedTs)}#${entry.segmentId}#${entry.id}`;
}

/** Whether `key` is a question entry's key under `prefix` (see {@link questionPrefix}). */
export function isQuestionKey(key: string, prefix: string = QUESTION_PREFIX): boolean {
  if (!key.startsWith(prefix)) return false;
  const [status, asked, ...rest] = key.slice(QUESTION_PREFIX.length).split("#");
  return (
    (QUESTION_STATUSES as readonly string[]).includes(status) &&
    /^[0-9]{13}$/.test(asked ?? "") &&
    rest.length >= 2 &&
    rest.every((part) => part !== "")
  );
}

/** The index entries of a result's questions (none when it has none). */
export function questionEntriesOf(result: SegmentResult): QuestionEntry[] {
  return (result.questions ?? []).map((question) => {
    const entry: QuestionEntry = {
      ...structuredClone(question),
      v: 1,
      channel: result.channel,
      segmentId: result.segmentId,
      late: result.late,
      extractedAt: result.extractedAt,
    };
    if (result.thread !== undefined) entry.thread = result.thread;
    // An entry goes with its result (the result retention).
    if (result.expiresAt !== undefined) entry.expiresAt = result.expiresAt;
    return entry;
  });
}

/** What changes in the index when a segment's entries go from `before` to `after`. */
export interface QuestionIndexChange {
  /** Entries to write: new keys, or an existing key whose fields changed. */
  put: QuestionEntry[];
  /** Keys of `before` that `after` no longer has (a status change moves the key). */
  deleted: string[];
}

export function questionIndexChange(
  before: readonly QuestionEntry[],
  after: readonly QuestionEntry[],
): QuestionIndexChange {
  const was = new Map(before.map((entry) => [questionItemKey(entry), JSON.stringify(entry)]));
  const keys = new Set(after.map(questionItemKey));
  return {
    put: after.filter((entry) => was.get(questionItemKey(entry)) !== JSON.stringify(entry)),
    deleted: [...was.keys()].filter((key) => !keys.has(key)),
  };
}

/** An entry as readers see it: the contract's fields only. */
export function questionOf(entry: QuestionEntry): Question {
  const question: Question = {
    id: entry.id,
    question: entry.question,
    askedId: entry.askedId,
    askedTs: entry.askedTs,
    status: entry.status,
    answerIds: [...entry.answerIds],
    segmentId: entry.segmentId,
  };
  if (entry.askedBy !== undefined) question.askedBy = entry.askedBy;
  if (entry.answer !== undefined) question.answer = entry.answer;
  if (entry.thread !== undefined) question.threadId = entry.thread;
  return question;
}
