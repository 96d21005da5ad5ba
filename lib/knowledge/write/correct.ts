/**
 * A person's correction of a question, made: what `questions mark`, the API's correction route
 * and (later) the platforms' message shortcuts call. The correction is its own item, so that
 * later extractions and re-extractions of the segment never overwrite it.
 */
import { CorrectionError } from "../errors.js";
import {
  CORRECTION_ACTIONS,
  type CorrectionAction,
  type QuestionCorrection,
} from "../store/correction-item.js";
import { applyCorrection } from "../store/corrections.js";
import type { ResultStore } from "../store/port.js";
import { type Question, questionOf } from "../store/question-entry.js";
import type { QuestionEntry } from "../store/schema/items.js";

export interface CorrectionRequest {
  channel: string;
  /** The question's id (`Question.id`, as `questions` and the API list it). */
  questionId: string;
  action: CorrectionAction;
  /** `answered`: the id of the channel's message that answers it (required then, else refused). */
  answerId?: string;
  /** Who corrects: a platform user id or an operator's name (at most 200 characters). */
  by?: string;
}

/** The channel's messages, to check that an answering message is there and not deleted. */
interface AnswerMessages {
  getMessages(
    channel: string,
    ids: readonly string[],
  ): Promise<readonly { id?: string; deleted?: boolean }[]>;
}

const MAX_BY = 200;
const MAX_ID = 512;

const bad = (field: string, problem: string) =>
  new CorrectionError("KNOWLEDGE_BAD_CORRECTION", field, `correction: ${field} ${problem}`);

/** The request checked field by field: a {@link CorrectionError} names the first at fault. */
function checkCorrection(request: CorrectionRequest): CorrectionRequest {
  const { questionId, action, answerId, by } = request;
  if (!CORRECTION_ACTIONS.includes(action)) {
    throw bad(
      "action",
      `must be one of ${CORRECTION_ACTIONS.join(", ")} (got ${JSON.stringify(String(action).slice(0, 40))})`,
    );
  }
  if (typeof questionId !== "string" || !/^[A-Za-z0-9_-]{1,128}$/.test(questionId)) {
    // Listings show it: `id 3f0c…` (32 hexadecimal digits as extraction makes them).
    throw bad("questionId", "must be a question's id, as questions and the API list it");
  }
  if (action === "answered") {
    if (typeof answerId !== "string" || answerId === "" || answerId.length > MAX_ID) {
      throw bad(
        "answerId",
        `is required to mark a question answered: the answering message's id (1 to ${MAX_ID} characters)`,
      );
    }
  } else if (answerId !== undefined) {
    throw bad("answerId", `is only for action answered (got action ${action})`);
  }
  if (by !== undefined && (typeof by !== "string" || by.trim() === "" || by.length > MAX_BY)) {
    throw bad("by", `must be a user id or a name of 1 to ${MAX_BY} characters`);
  }
  return request;
}

/** The channel's question index entry of id `questionId`, read page by page; undefined: none. */
async function findQuestion(
  store: Pick<ResultStore, "listQuestions">,
  channel: string,
  questionId: string,
): Promise<QuestionEntry | undefined> {
  let after: string | undefined;
  do {
    const page = await store.listQuestions(channel, { limit: 1000, ...(after && { after }) });
    const found = page.entries.find((entry) => entry.id === questionId);
    if (found !== undefined) return found;
    after = page.next ?? undefined;
  } while (after !== undefined);
  return undefined;
}

/**
 * Records `request` (checked first) and resolves to it as stored, with the question as readers
 * now see it (undefined: hidden). The answering message is checked against `messages` when given; `now`
 * stamps it. A person's later correction of the same question replaces this one.
 */
export async function correctQuestion(
  store: Pick<ResultStore, "listQuestions" | "getResult" | "saveCorrection">,
  request: CorrectionRequest,
  options: { messages?: AnswerMessages; now?: () => number } = {},
): Promise<{ correction: QuestionCorrection; question: Question | undefined }> {
  const { channel, questionId, action, answerId, by } = checkCorrection(request);
  const entry = await findQuestion(store, channel, questionId);
  if (entry === undefined) {
    throw new CorrectionError(
      "KNOWLEDGE_QUESTION_NOT_FOUND",
      "questionId",
      `correction: questionId ${questionId} is no question of channel ${JSON.stringify(channel)}`,
    );
  }
  if (answerId !== undefined && options.messages !== undefined) {
    const found = await options.messages.getMessages(channel, [answerId]);
    const message = found.find((m) => m.id === answerId);
    if (message === undefined || message.deleted) {
      throw new CorrectionError(
        "KNOWLEDGE_ANSWER_NOT_FOUND",
        "answerId",
        `correction: answerId ${JSON.stringify(answerId.slice(0, 80))} is no message of channel ${JSON.stringify(channel)}`,
      );
    }
  }
  const result = await store.getResult(channel, entry.segmentId);
  const correction: QuestionCorrection = {
    v: 1,
    channel,
    segmentId: entry.segmentId,
    questionId: entry.id,
    askedId: entry.askedId,
    askedTs: entry.askedTs,
    action,
    ...(answerId !== undefined && { answerId }),
    ...(by !== undefined && { by: by.trim() }),
    at: new Date((options.now ?? Date.now)()).toISOString(),
    ...(result?.expiresAt !== undefined && { expiresAt: result.expiresAt }),
  };
  await store.saveCorrection(correction);
  return { correction, question: applyCorrection(questionOf(entry), correction) };
}
