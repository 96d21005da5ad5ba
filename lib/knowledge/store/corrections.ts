/**
 * Corrections laid over the model's questions at read time: a person's word wins over every
 * extraction before or after it, because no extraction writes the correction's item.
 */
import {
  type CorrectionAction,
  correctedStatus,
  type QuestionCorrection,
} from "./correction-item.js";
import type { SegmentResult, StoredQuestion } from "./schema/items.js";

/** What readers are told of a correction (`by` absent when unknown or erased). */
export interface CorrectionNote {
  action: CorrectionAction;
  /** ISO 8601. */
  at: string;
  by?: string;
  /** Marked answered by a message since deleted. */
  answerRemoved?: true;
}

/** The fields a correction changes, on any question shape (stored, indexed, read). */
interface Correctable {
  status: StoredQuestion["status"];
  answer?: string;
  answerIds: string[];
}

/** A question as corrected: `corrected` true and its note when a correction applies. */
export type Corrected<Q> = Q & { corrected?: true; correction?: CorrectionNote };

/**
 * The correction of the question `id` asked by `askedId` in `segmentId`: the latest of those made
 * for that id or that asking message (a re-extraction may word it otherwise, with another id).
 */
export function correctionOf(
  corrections: readonly QuestionCorrection[],
  question: { segmentId: string; id: string; askedId: string },
): QuestionCorrection | undefined {
  let found: QuestionCorrection | undefined;
  for (const c of corrections) {
    if (c.segmentId !== question.segmentId) continue;
    if (c.questionId !== question.id && c.askedId !== question.askedId) continue;
    if (found === undefined || c.at > found.at) found = c;
  }
  return found;
}

/** The note of `correction` readers see. */
export function noteOf(correction: QuestionCorrection): CorrectionNote {
  return {
    action: correction.action,
    at: correction.at,
    ...(correction.by !== undefined && { by: correction.by }),
    ...(correction.answerRemoved && { answerRemoved: true as const }),
  };
}

/**
 * `question` as `correction` has it: answered by its message (the model's summary kept only when
 * that message was among the model's), reopened (no answer), or undefined: hidden.
 */
export function applyCorrection<Q extends Correctable>(
  question: Q,
  correction: QuestionCorrection | undefined,
): Corrected<Q> | undefined {
  if (correction === undefined) return question;
  const status = correctedStatus(correction.action);
  if (status === undefined) return undefined;
  const { answer, ...rest } = question;
  const answerIds = correction.answerId === undefined ? [] : [correction.answerId];
  const keepsAnswer =
    answer !== undefined &&
    correction.answerId !== undefined &&
    question.answerIds.includes(correction.answerId);
  return {
    ...(rest as Omit<Q, "answer">),
    status,
    answerIds,
    ...(keepsAnswer && { answer }),
    corrected: true,
    correction: noteOf(correction),
  } as Corrected<Q>;
}

/** A result with its questions corrected (hidden ones left out): what digests and reports read. */
export function correctResult<R extends Pick<SegmentResult, "segmentId" | "questions">>(
  result: R,
  corrections: readonly QuestionCorrection[],
): R & { questions?: Corrected<StoredQuestion>[] } {
  if (result.questions === undefined || corrections.length === 0) return result;
  const questions = result.questions.flatMap((q) => {
    const corrected = applyCorrection(
      q,
      correctionOf(corrections, { ...q, segmentId: result.segmentId }),
    );
    return corrected === undefined ? [] : [corrected];
  });
  return { ...result, questions };
}
