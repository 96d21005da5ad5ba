import { normalizeTopic } from "../extraction/index.js";
import { noCounts, type RedactionCountName } from "../kinds.js";
import { topicWords } from "../topics/index.js";
import type { MessageChange, MessageState } from "./message-states.js";
import { redactQuestions } from "./result-questions.js";
import {
  MAX_STORED_AUTHORS,
  type SegmentResult,
  type StoredCandidate,
  type TopicSupport,
} from "./schema/items.js";
import { supportOf } from "./topic-support.js";

/** What one redaction touched, counts only: each knowledge kind's that redaction reports. */
export type RedactionCounts = Record<RedactionCountName, number>;

export const NO_REDACTION: Readonly<RedactionCounts> = Object.freeze(
  noCounts<RedactionCountName>((count) => count.metric !== null),
);

/** The writes that redact one result, computed before any is made (so that a retry redoes them). */
export interface RedactionPlan {
  /** The redacted result; undefined when every message was deleted (the result is removed). */
  next: SegmentResult | undefined;
  /** Topic entries to write (their evidence moved). */
  supports: TopicSupport[];
  /** Normalized topics whose entries of this segment are deleted. */
  removedTopics: string[];
  windows: string[];
}

/**
 * The message ids whose state a redaction needs besides the changed ones: with a deletion, the
 * kept messages of every candidate range that holds a deleted one (their authors) and the
 * result's new bounds. Without the result's `messageIds`, none.
 */
export function neededIds(result: SegmentResult, deleted: ReadonlySet<string>): string[] {
  const ids = result.messageIds;
  if (ids === undefined || deleted.size === 0) return [];
  const needed = new Set<string>();
  const kept = ids.filter((id) => !deleted.has(id));
  if (kept.length > 0) needed.add(kept[0]).add(kept[kept.length - 1]);
  for (const candidate of result.candidates) {
    // A candidate without a range names no authors.
    if (candidate.turnRange === null) continue;
    const range = ids.slice(candidate.turnRange[0], candidate.turnRange[1] + 1);
    if (range.some((id) => deleted.has(id))) {
      for (const id of range) if (!deleted.has(id)) needed.add(id);
    }
  }
  return [...needed];
}

/**
 * The redaction of `result` for `changes`, given the message states (the changed messages' and
 * {@link neededIds}'). Undefined when nothing is to change: the changes were applied already, or
 * none is one of its messages. Pure: the same inputs give the same writes.
 */
export function planRedaction(
  result: SegmentResult,
  changes: readonly MessageChange[],
  states: ReadonlyMap<string, MessageState>,
  reextractChangedShare: number,
): RedactionPlan | undefined {
  const ids = result.messageIds;
  const isMember = (change: MessageChange) =>
    ids === undefined ? withinBounds(result, change) : ids.includes(change.id);
  // The store's state is the truth: an edit since followed by a deletion is a deletion.
  const kindOf = (change: MessageChange) =>
    states.get(change.id)?.deleted ? "delete" : change.kind;
  const deleted = new Set(
    changes.filter((c) => kindOf(c) === "delete" && isMember(c)).map((c) => c.id),
  );
  const edits = { ...result.edits };
  const editedSince = new Set(result.editedSince);
  // Deleted messages, and those edited since the result last accounted for them.
  const gone = new Set(deleted);
  for (const change of changes) {
    const editedAt = states.get(change.id)?.editedAt;
    if (kindOf(change) !== "edit" || !isMember(change) || editedAt === undefined) continue;
    if (editedAt <= (edits[change.id] ?? -Infinity)) continue;
    edits[change.id] = editedAt;
    editedSince.add(change.id);
    gone.add(change.id);
  }
  if (gone.size === 0) return undefined;
  for (const id of deleted) {
    delete edits[id];
    editedSince.delete(id);
  }
  const windows = result.windows ?? [];
  if (ids === undefined) return unlistedPlan(result, deleted, gone, edits, windows);

  const kept = ids.filter((id) => !deleted.has(id));
  if (kept.length === 0) {
    return {
      next: undefined,
      supports: [],
      removedTopics: result.candidates.map((c) => normalizeTopic(c.topic)),
      windows,
    };
  }
  const position = new Map(kept.map((id, i) => [id, i]));
  const tsOf = (id: string) => states.get(id)?.ts ?? 0;
  const candidates: StoredCandidate[] = [];
  const supports: TopicSupport[] = [];
  const removedTopics: string[] = [];
  for (const candidate of result.candidates) {
    const range = candidate.turnRange;
    if (range === null) {
      candidates.push(candidate);
      continue;
    }
    const rangeIds = ids.slice(range[0], range[1] + 1);
    const left = rangeIds.filter((id) => !deleted.has(id));
    const first = left[0];
    const last = left[left.length - 1];
    if (first === undefined || last === undefined) {
      removedTopics.push(normalizeTopic(candidate.topic));
      continue;
    }
    const next: StoredCandidate = {
      ...candidate,
      turnRange: [position.get(first) ?? 0, position.get(last) ?? 0],
      messageIds: [first, last],
    };
    if (left.length < rangeIds.length) {
      // What a deleted message said must not outlive it (an erased person's words above all):
      // the topic stays only while what is left of its evidence still says each of its words.
      const said = wordsOf(left.map((id) => states.get(id)?.text ?? "").join("\n"));
      if (!saysAll(said, candidate.topic)) {
        removedTopics.push(normalizeTopic(candidate.topic));
        continue;
      }
      next.tags = candidate.tags.filter((tag) => saysAll(said, tag));
      if (!saysAll(said, candidate.reason)) next.reason = "";
      const authors = new Set<string>();
      for (const id of left) {
        const state = states.get(id);
        if (state?.kind !== "system" && state?.author) authors.add(state.author);
      }
      next.authorCount = authors.size;
      next.authors = [...authors].slice(0, MAX_STORED_AUTHORS);
      supports.push(supportOf(result, next, tsOf(first), tsOf(last)));
    }
    candidates.push(next);
  }
  const firstId = kept[0];
  const lastId = kept[kept.length - 1];
  const deletedSince = (result.deletedSince ?? 0) + deleted.size;
  const changed = editedSince.size + deletedSince;
  const share = (n: number) => n / Math.max(1, result.count + (result.deletedSince ?? 0));
  // `count`, the bounds and `messageIds` agree, as in a segment message (`reextract` sends one).
  const next: SegmentResult = {
    ...result,
    count: kept.length,
    first: result.first.id === firstId ? result.first : { id: firstId, ts: tsOf(firstId) },
    last: result.last.id === lastId ? result.last : { id: lastId, ts: tsOf(lastId) },
    messageIds: kept,
    candidates,
    ...questionsLeft(result, gone),
    windows: [],
    editedSince: [...editedSince],
    deletedSince,
    changedMessages: changed,
    redactions: (result.redactions ?? 0) + 1,
  };
  setEdits(next, edits);
  if (
    share(result.changedMessages ?? 0) <= reextractChangedShare &&
    share(changed) > reextractChangedShare
  ) {
    next.reextractPending = true;
  }
  return { next, supports, removedTopics, windows };
}

/**
 * A result too large to list its messages: only what is certain is done. Its windows go, and
 * candidates whose evidence starts or ends at a deleted message are removed (the range cannot
 * be shrunk without the list), and questions asked or answered by a changed message are redacted
 * (their ids say it); it is not counted toward re-extraction.
 */
function unlistedPlan(
  result: SegmentResult,
  deleted: ReadonlySet<string>,
  gone: ReadonlySet<string>,
  edits: Record<string, number>,
  windows: string[],
): RedactionPlan {
  const removed = result.candidates.filter((c) => c.messageIds?.some((id) => deleted.has(id)));
  const next: SegmentResult = {
    ...result,
    candidates: result.candidates.filter((c) => !removed.includes(c)),
    ...questionsLeft(result, gone),
    windows: [],
    redactions: (result.redactions ?? 0) + 1,
  };
  setEdits(next, edits);
  return {
    next,
    supports: [],
    removedTopics: removed.map((c) => normalizeTopic(c.topic)),
    windows,
  };
}

/** The result's questions without what the `gone` messages asked or answered (none: absent). */
function questionsLeft(
  result: SegmentResult,
  gone: ReadonlySet<string>,
): Pick<SegmentResult, "questions"> {
  return result.questions === undefined
    ? {}
    : { questions: redactQuestions(result.questions, gone) };
}

function setEdits(result: SegmentResult, edits: Record<string, number>): void {
  if (Object.keys(edits).length > 0) result.edits = edits;
  else delete result.edits;
}

/** The words of `text` as a topic's words are told apart (`topicWords`). */
const wordsOf = (text: string): Set<string> => new Set(topicWords(text));

/** Whether every word of `phrase` is among `words`. */
const saysAll = (words: ReadonlySet<string>, phrase: string): boolean =>
  topicWords(phrase).every((word) => words.has(word));

/** Whether a message lies between the segment's first and last (its order: ts, then id). */
function withinBounds(result: SegmentResult, change: MessageChange): boolean {
  const after = (a: { id: string; ts: number }, b: { id: string; ts: number }) =>
    a.ts > b.ts || (a.ts === b.ts && Buffer.compare(Buffer.from(a.id), Buffer.from(b.id)) >= 0);
  return after(change, result.first) && after(result.last, change);
}
