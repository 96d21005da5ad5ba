/**
 * A result's questions: an extractor's questions (turn indexes into the turns it was shown) as
 * stored ones (message ids, a stable id), and what a redaction leaves of them.
 */
import { createHash } from "node:crypto";
import { boundQuestion, countTrimmed } from "../extraction/bounds/index.js";
import { normalizeQuestion, type QuestionCandidate, type Trimmed } from "../extraction/index.js";
import type { StoredQuestion } from "./schema/items.js";

/**
 * A question's stable id: the same question asked by the same message of the same segment
 * always gets the same id, so that a re-extraction overwrites its index entry.
 */
export function questionId(segmentId: string, askedId: string, question: string): string {
  return createHash("sha256")
    .update(`${segmentId}\0${askedId}\0${normalizeQuestion(question)}`)
    .digest("hex")
    .slice(0, 32);
}

/**
 * The questions as stored, in the order asked: each held to the field bounds (cuts counted in
 * `trimmed`), its turns (`shown[i]` is the message turn `i` stands for) mapped to message ids.
 * A question whose asking turn is not one of `shown`, or whose text is blank, is left out (and
 * counted); answering turns outside them or not after the asking message are left out, and
 * `answered` with none left reads `unclear`. One question per id (the first).
 */
export function storedQuestions(
  segmentId: string,
  questions: readonly QuestionCandidate[],
  shown: readonly number[],
  messages: readonly { id: string; ts: number; author?: string }[],
  trimmed: Trimmed,
): StoredQuestion[] {
  const stored = new Map<string, StoredQuestion & { at: number }>();
  for (const candidate of questions) {
    const question = boundQuestion(candidate, trimmed);
    const at = shown[question.asked];
    const asking = at === undefined ? undefined : messages[at];
    if (asking === undefined || normalizeQuestion(question.question) === "") {
      countTrimmed(trimmed, "questions");
      continue;
    }
    const answering = [...new Set(question.answeredBy.map((i) => shown[i]))]
      .filter((i): i is number => i !== undefined && i > at && i < messages.length)
      .sort((a, b) => a - b);
    const answered = question.status === "answered" && answering.length > 0;
    const entry: StoredQuestion & { at: number } = {
      at,
      id: questionId(segmentId, asking.id, question.question),
      question: question.question,
      status: question.status === "answered" && !answered ? "unclear" : question.status,
      askedId: asking.id,
      askedTs: asking.ts,
      answerIds: answered ? answering.map((i) => messages[i].id) : [],
    };
    if (asking.author !== undefined) entry.askedBy = asking.author;
    if (answered && question.answer !== undefined) entry.answer = question.answer;
    if (!stored.has(entry.id)) stored.set(entry.id, entry);
  }
  return [...stored.values()]
    .sort((a, b) => a.at - b.at)
    .map(({ at: _at, ...question }) => question);
}

/**
 * What a redaction leaves of a result's questions when the messages `gone` were deleted or
 * edited: a question asked by one of them goes (its words may be gone); the others lose those
 * answering messages, and an answered one left with none reads `unclear`, without its answer.
 * The questions themselves when none is touched.
 */
export function redactQuestions(
  questions: readonly StoredQuestion[],
  gone: ReadonlySet<string>,
): StoredQuestion[] {
  const kept: StoredQuestion[] = [];
  for (const question of questions) {
    if (gone.has(question.askedId)) continue;
    const answerIds = question.answerIds.filter((id) => !gone.has(id));
    if (answerIds.length === question.answerIds.length) {
      kept.push(question);
      continue;
    }
    if (answerIds.length > 0) {
      kept.push({ ...question, answerIds });
      continue;
    }
    const { answer: _answer, ...rest } = question;
    kept.push({ ...rest, status: "unclear", answerIds });
  }
  return kept;
}
