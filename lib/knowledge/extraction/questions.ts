/**
 * A window's questions from the model's reply to the transcript's: held to their bounds before a
 * reply is stored (the cap, the field lengths), then placed (the model's turn numbers checked
 * against the window and mapped to the transcript's turns) and merged across windows, which
 * overlap. Nothing the model writes there fails a reply: a question that cannot be read is
 * dropped and counted, one whose answering turns cannot be is corrected.
 */
import { boundQuestion, countTrimmed } from "./bounds/bounds.js";
import type { QuestionCandidate, QuestionStatus, Trimmed } from "./types.js";

/** The dedupe key of a question's text: lower-case, whitespace collapsed, no closing marks. */
export function normalizeQuestion(question: string): string {
  return question
    .toLowerCase()
    .split(/\s+/u)
    .filter(Boolean)
    .join(" ")
    .replace(/[\s?!.？！。…]+$/u, "");
}

/** The first `max` questions of a reply (the rest dropped and counted), fields cut to length. */
export function boundQuestions(
  questions: readonly QuestionCandidate[],
  max: number,
  trimmed: Trimmed,
): QuestionCandidate[] {
  countTrimmed(trimmed, "questions", questions.length - max);
  return questions.slice(0, max).map((question) => boundQuestion(question, trimmed));
}

/**
 * A window's questions, numbered as the model numbers the rendered turns (from 1), as indexes
 * into the transcript: `indexes` are the window's rendered turns, `offset` where the window
 * starts. A question with a blank text or an asking number that is not one of the window's
 * turns is dropped and counted (`questions`). Answering numbers outside the window, or not after
 * the asking turn, are left out; `answered` with none left reads `unclear`; any other status has
 * no answering turns and no answer.
 */
export function placeQuestions(
  questions: readonly QuestionCandidate[],
  indexes: readonly number[],
  offset: number,
  trimmed: Trimmed,
): QuestionCandidate[] {
  const placed: QuestionCandidate[] = [];
  const turn = (n: number) => offset + indexes[n - 1];
  for (const question of questions) {
    const { asked } = question;
    if (question.question.trim() === "" || !isTurnNumber(asked, indexes.length)) {
      countTrimmed(trimmed, "questions");
      continue;
    }
    const by = [...new Set(question.answeredBy)]
      .filter((n) => n > asked && isTurnNumber(n, indexes.length))
      .sort((a, b) => a - b);
    const status: QuestionStatus =
      question.status === "answered" && by.length === 0 ? "unclear" : question.status;
    const next: QuestionCandidate = {
      question: question.question,
      asked: turn(asked),
      status,
      answeredBy: status === "answered" ? by.map(turn) : [],
    };
    if (status === "answered" && question.answer !== undefined && question.answer.trim() !== "") {
      next.answer = question.answer;
    }
    placed.push(next);
  }
  return placed;
}

function isTurnNumber(n: number, count: number): boolean {
  return Number.isInteger(n) && n >= 1 && n <= count;
}

/** What a status says, least to most: a later window's stronger verdict wins. */
const STRENGTH: Record<QuestionStatus, number> = { unanswered: 0, unclear: 1, answered: 2 };

/**
 * Questions of overlapping windows merged by asking turn and normalized text, ordered by asking
 * turn (the first seen first among a turn's): a stronger status (answered over unclear over
 * unanswered) brings its answer and answering turns; two answered ones join their answering
 * turns and keep the first answer. Deterministic for the same input.
 */
export function dedupeQuestions(questions: readonly QuestionCandidate[]): QuestionCandidate[] {
  const merged = new Map<string, QuestionCandidate>();
  for (const question of questions) {
    const key = `${question.asked}\0${normalizeQuestion(question.question)}`;
    const kept = merged.get(key);
    if (kept === undefined || STRENGTH[question.status] > STRENGTH[kept.status]) {
      merged.set(key, { ...question, answeredBy: [...question.answeredBy] });
    } else if (kept.status === "answered" && question.status === "answered") {
      kept.answeredBy = [...new Set([...kept.answeredBy, ...question.answeredBy])].sort(
        (a, b) => a - b,
      );
      if (kept.answer === undefined && question.answer !== undefined) kept.answer = question.answer;
    }
  }
  return [...merged.values()].sort((a, b) => a.asked - b.asked);
}
