/**
 * `POST /channels/{c}/questions/{id}/correction`: a person's correction of a question (body
 * `{action, answerId?, by?}`), recorded by lib/knowledge's `correctQuestion`. Answered with the
 * question as reads now show it; never cached.
 */
import { CorrectionError } from "../../knowledge/index.js";
import { type CorrectionNote, noteOf, type ResultStore } from "../../knowledge/store/index.js";
import { correctQuestion } from "../../knowledge/write/index.js";
import { ApiBodyError, ApiNotFoundError, ApiUnavailableError } from "./errors.js";
import type { ApiSources, CorrectionsSource } from "./ports.js";
import { idParameter, queryParameters } from "./request.js";
import {
  type ApiCorrectionNote,
  CORRECTION_ACTIONS,
  type CorrectionBody,
  type CorrectionResult,
} from "./schemas.js";

/**
 * Corrections recorded in `store` (`correctQuestion`); with `messages`, an answering message
 * must be one of the channel's, not deleted.
 */
export function storeCorrections(
  store: Pick<ResultStore, "listQuestions" | "getResult" | "saveCorrection">,
  options: Parameters<typeof correctQuestion>[2] = {},
): CorrectionsSource {
  return {
    async correct(request) {
      const done = await correctQuestion(store, request, options);
      return { correction: noteOf(done.correction), question: done.question };
    },
  };
}

/** The largest body taken: the fields' own bounds, and room for JSON's quoting. */
const MAX_BODY_BYTES = 4096;

/** The correction's fields readers see, whatever else a source's note carries. */
export function correctionBody(note: CorrectionNote): ApiCorrectionNote {
  return {
    action: note.action,
    at: note.at,
    ...(note.by !== undefined && { by: note.by }),
    ...(note.answerRemoved && { answerRemoved: true as const }),
  };
}

export async function correctionRoute(
  sources: ApiSources,
  rawQuery: string,
  rawChannel: string,
  rawId: string,
  body: string | undefined,
): Promise<CorrectionResult> {
  const channel = idParameter("channel", rawChannel);
  const questionId = idParameter("id", rawId);
  queryParameters(rawQuery, []);
  const request = correctionRequest(body);
  if (sources.corrections === undefined) throw new ApiUnavailableError("correction");
  try {
    const done = await sources.corrections.correct({ channel, questionId, ...request });
    return {
      channel,
      questionId,
      correction: correctionBody(done.correction),
      question: done.question ?? null,
    };
  } catch (error) {
    if (!(error instanceof CorrectionError)) throw error;
    if (error.code === "KNOWLEDGE_QUESTION_NOT_FOUND") throw new ApiNotFoundError("question");
    // The lib's message may quote what was sent; the field and the problem's kind only.
    throw new ApiBodyError(
      error.field === "questionId" ? "id" : `body.${error.field}`,
      error.code === "KNOWLEDGE_ANSWER_NOT_FOUND"
        ? "is no message of the channel (or it was deleted)"
        : "is not valid for this action",
    );
  }
}

/** The body as the route takes it, field by field: an {@link ApiBodyError} names the first at fault. */
function correctionRequest(body: string | undefined): CorrectionBody {
  if (body === undefined || body === "")
    throw new ApiBodyError("body", "a JSON object is required");
  if (Buffer.byteLength(body) > MAX_BODY_BYTES) {
    throw new ApiBodyError("body", `at most ${MAX_BODY_BYTES} bytes`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new ApiBodyError("body", "is not JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ApiBodyError("body", "must be a JSON object");
  }
  const { action, answerId, by, ...rest } = parsed as Record<string, unknown>;
  const [unknown] = Object.keys(rest);
  if (unknown !== undefined) {
    throw new ApiBodyError("body", "takes action, answerId and by only");
  }
  if (!CORRECTION_ACTIONS.includes(action as CorrectionBody["action"])) {
    throw new ApiBodyError("body.action", `must be one of ${CORRECTION_ACTIONS.join(", ")}`);
  }
  const text = (field: string, value: unknown, max: number) => {
    if (value === undefined) return undefined;
    if (typeof value !== "string" || value.trim() === "" || value.length > max) {
      throw new ApiBodyError(`body.${field}`, `must be a string of 1 to ${max} characters`);
    }
    return value;
  };
  const answer = text("answerId", answerId, 512);
  const who = text("by", by, 200);
  if (action === "answered" && answer === undefined) {
    throw new ApiBodyError("body.answerId", "is required with action answered");
  }
  if (action !== "answered" && answer !== undefined) {
    throw new ApiBodyError("body.answerId", "is only for action answered");
  }
  return {
    action: action as CorrectionBody["action"],
    ...(answer !== undefined && { answerId: answer }),
    ...(who !== undefined && { by: who }),
  };
}
