/**
 * A person's correction of a question (`correction#<segmentId>#<questionId>`): marked answered
 * by a message, reopened, or hidden. Its own item, never written by extraction or by a result's
 * redaction, so that a re-extraction cannot overwrite it; reads lay it over the model's question
 * (`./corrections.ts`).
 */
import type { QuestionStatus } from "../extraction/index.js";

/** What a person said of a question. */
export type CorrectionAction = "answered" | "reopen" | "hidden";

export const CORRECTION_ACTIONS: readonly CorrectionAction[] = ["answered", "reopen", "hidden"];

export interface QuestionCorrection {
  v: 1;
  channel: string;
  /** The segment the question was asked in, and its id there when corrected. */
  segmentId: string;
  questionId: string;
  /**
   * The asking message: a re-extraction that words the question otherwise (another id) still
   * asks it by the same message, and the correction follows it.
   */
  askedId: string;
  askedTs: number;
  action: CorrectionAction;
  /** `answered`: the message of the channel that answers it; absent once deleted. */
  answerId?: string;
  /** `answered`: its answer message was deleted since (the question stays answered). */
  answerRemoved?: true;
  /** Who made it: a platform user id or an operator's name; absent once they were erased. */
  by?: string;
  /** When, ISO 8601. */
  at: string;
  /** The expiry of the question's result when corrected: the correction goes with it. */
  expiresAt?: number;
}

export const CORRECTION_PREFIX = "correction#";

/**
 * Every attribute a correction item may have, its keys (`channel`, `item`) included: what the
 * API's correction function may write (infra/api.ts), and nothing else.
 */
export const CORRECTION_ATTRIBUTES = [
  "channel",
  "item",
  "v",
  "segmentId",
  "questionId",
  "askedId",
  "askedTs",
  "action",
  "answerId",
  "answerRemoved",
  "by",
  "at",
  "expiresAt",
] as const satisfies readonly (keyof QuestionCorrection | "item")[];

export const correctionItemKey = (c: Pick<QuestionCorrection, "segmentId" | "questionId">) =>
  `${CORRECTION_PREFIX}${c.segmentId}#${c.questionId}`;

/** The status a correction gives its question; undefined: hidden. */
export function correctedStatus(action: CorrectionAction): QuestionStatus | undefined {
  return action === "answered" ? "answered" : action === "reopen" ? "unanswered" : undefined;
}
