/**
 * The bodies of `POST /channels/{c}/questions/{id}/correction` and the correction a question
 * carries, apart from schemas.ts for length; they are API bodies all the same (`apiBodies`).
 */
import { z } from "zod";
import { named } from "./schema-kit.js";

export const CORRECTION_ACTIONS = ["answered", "reopen", "hidden"] as const;

export const CorrectionNote = named(
  z.object({
    action: z
      .enum(CORRECTION_ACTIONS)
      .describe("answered (by a message), reopen (unanswered) or hidden (in no read)"),
    at: z.string().describe("when, ISO 8601"),
    by: z
      .string()
      .optional()
      .describe("who: a platform user id or an operator's name; absent when not given or erased"),
    answerRemoved: z
      .literal(true)
      .optional()
      .describe("the answering message it named was deleted since"),
  }),
  "CorrectionNote",
  "A person's correction of a question: what they said, when and who.",
);

export const CorrectionBody = named(
  z
    .object({
      action: z.enum(CORRECTION_ACTIONS),
      answerId: z
        .string()
        .min(1)
        .max(512)
        .optional()
        .describe("with answered (required then): the id of the channel's message that answers it"),
      by: z
        .string()
        .min(1)
        .max(200)
        .optional()
        .describe("who corrects it: a platform user id or an operator's name"),
    })
    .strict(),
  "CorrectionBody",
  "A correction of a question: it wins over every extraction, before and after it.",
);

export const CorrectionResult = named(
  z.object({
    channel: z.string(),
    questionId: z.string(),
    correction: CorrectionNote,
    question: z
      .unknown()
      .describe("the question as reads now show it (a Question); null once hidden"),
  }),
  "CorrectionResult",
  "The correction recorded, and the question as it now reads.",
);
