/**
 * The bounds on what a model's reply may put into storage, and on what a turn may put into a
 * prompt: an over-long field is cut, a candidate past the cap dropped, and every cut counted by
 * what was cut ({@link Trimmed}), so that a reply is never stored whole and never silently cut.
 */
import type { Candidate, QuestionCandidate, Trimmed } from "../types.js";

/** A topic is a short name; a reason one sentence; a tag a word or two. In characters. */
export const MAX_TOPIC_CHARS = 200;
export const MAX_REASON_CHARS = 1000;
export const MAX_TAGS = 5;
export const MAX_TAG_CHARS = 50;
/** A question is the asker's words, shortened; an answer a summary of a sentence or two. */
export const MAX_QUESTION_CHARS = 200;
export const MAX_ANSWER_CHARS = 300;
/** Questions kept per window (the first in the model's order; the rest dropped and counted). */
export const MAX_QUESTIONS = 20;
/** Candidates kept per window when the analyzer is not told (the original's shipped setting). */
export const DEFAULT_MAX_CANDIDATES = 20;
/** Characters of one turn's text a prompt shows: a few thousand, far above a chat line. */
export const DEFAULT_MAX_TURN_CHARS = 4000;

/** Adds `count` cuts of `field` to `into`. */
export function countTrimmed<F extends string>(
  into: Partial<Record<F, number>>,
  field: F,
  count = 1,
): void {
  if (count > 0) into[field] = (into[field] ?? 0) + count;
}

/** Every count of `parts` added into `into`. */
export function addTrimmed<F extends string>(
  into: Partial<Record<F, number>>,
  ...parts: (Partial<Record<F, number>> | undefined)[]
): void {
  for (const part of parts) {
    for (const [field, count] of Object.entries(part ?? {}) as [F, number][]) {
      countTrimmed(into, field, count);
    }
  }
}

/**
 * `text` cut to `max` UTF-16 code units, never inside a surrogate pair, trailing whitespace
 * removed and an ellipsis added so that a reader sees it was cut; `text` itself when it fits.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end).trimEnd()}…`;
}

/**
 * The candidate with its fields within bounds, each cut counted into `trimmed`; the candidate
 * itself when nothing needed cutting (so bounding twice counts nothing twice).
 */
export function boundCandidate<C extends Candidate>(candidate: C, trimmed: Trimmed): C {
  const topic = cutText(candidate.topic, MAX_TOPIC_CHARS);
  const reason = cutText(candidate.reason, MAX_REASON_CHARS);
  const tags = candidate.tags.slice(0, MAX_TAGS).map((tag) => cutText(tag, MAX_TAG_CHARS));
  const cutTags =
    candidate.tags.length - tags.length + tags.filter((t, i) => t !== candidate.tags[i]).length;
  if (topic === candidate.topic && reason === candidate.reason && cutTags === 0) return candidate;
  if (topic !== candidate.topic) countTrimmed(trimmed, "topics");
  if (reason !== candidate.reason) countTrimmed(trimmed, "reasons");
  countTrimmed(trimmed, "tags", cutTags);
  return { ...candidate, topic, reason, tags };
}

/**
 * The question with its text and answer within bounds, each cut counted into `trimmed`; the
 * question itself when nothing needed cutting.
 */
export function boundQuestion<Q extends QuestionCandidate>(question: Q, trimmed: Trimmed): Q {
  const text = cutText(question.question, MAX_QUESTION_CHARS);
  const answer =
    question.answer === undefined ? undefined : cutText(question.answer, MAX_ANSWER_CHARS);
  if (text === question.question && answer === question.answer) return question;
  if (text !== question.question) countTrimmed(trimmed, "questionTexts");
  if (answer !== question.answer) countTrimmed(trimmed, "answers");
  return answer === undefined
    ? { ...question, question: text }
    : { ...question, question: text, answer };
}
