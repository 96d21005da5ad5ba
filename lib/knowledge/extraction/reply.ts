/**
 * What a model's reply must be, checked after parsing (zod): an array of wire candidates, or an
 * object holding them under `candidates` and its questions under `questions`. Missing optional
 * fields take their empty values. A question that is not of the shape asked for is dropped and
 * counted, never a reason to ask again: the candidates are the reply's point.
 */
import { z } from "zod";
import { InvalidModelOutputError } from "./errors.js";
import { type Prompt, SYSTEM_PROMPT } from "./prompts/prompts.js";
import {
  type AnalyzeOptions,
  type Candidate,
  type LLM,
  type PromptTurn,
  QUESTION_STATUSES,
  type QuestionCandidate,
} from "./types.js";

const wireCandidate = z.object({
  topic: z.string(),
  reason: z.string().nullish(),
  confidence: z.number().min(0).max(1),
  tags: z.array(z.string()).nullish(),
  turn_range: z.tuple([z.number().int(), z.number().int()]).nullish(),
  subjective: z.boolean().nullish(),
  wiki_worthy: z.boolean().nullish(),
});

const wireQuestion = z.object({
  question: z.string(),
  asked: z.number().int(),
  status: z.enum(QUESTION_STATUSES),
  answer: z.string().nullish(),
  answered_by: z.array(z.number().int()).nullish(),
});

const reply = z.union([
  z.array(wireCandidate),
  z.object({
    candidates: z.array(wireCandidate),
    questions: z.array(z.unknown()).nullish(),
  }),
]);

/**
 * A candidate as the model gave it, with its optional fields filled in: its `turnRange` still the
 * model's 1-based turn numbers, not yet mapped to the transcript.
 */
type WireCandidate = Candidate;

/** A reply as read: its questions still numbered as the model numbered the turns. */
export interface WireReply {
  candidates: WireCandidate[];
  questions: QuestionCandidate[];
  /** Questions left out for a shape that is not the one asked for. */
  unreadQuestions: number;
}

/** The candidates of a reply, or the reason it is not one (a path and a problem per issue). */
function readReply(value: unknown): WireReply | { problem: string } {
  const parsed = reply.safeParse(value);
  if (!parsed.success) {
    const problem = parsed.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.join(".") || "reply"}: ${issue.message}`)
      .join("; ");
    return { problem };
  }
  const list = Array.isArray(parsed.data) ? parsed.data : parsed.data.candidates;
  const asked = Array.isArray(parsed.data) ? [] : (parsed.data.questions ?? []);
  const questions = asked.flatMap((item) => {
    const read = wireQuestion.safeParse(item);
    return read.success ? [questionOf(read.data)] : [];
  });
  return {
    questions,
    unreadQuestions: asked.length - questions.length,
    candidates: list.map((c) => {
      const candidate: WireCandidate = {
        topic: c.topic,
        reason: c.reason ?? "",
        confidence: c.confidence,
        tags: c.tags ?? [],
        turnRange: c.turn_range ?? null,
        subjective: c.subjective ?? false,
      };
      if (c.wiki_worthy !== undefined && c.wiki_worthy !== null)
        candidate.wikiWorthy = c.wiki_worthy;
      return candidate;
    }),
  };
}

function questionOf(wire: z.infer<typeof wireQuestion>): QuestionCandidate {
  const question: QuestionCandidate = {
    question: wire.question,
    asked: wire.asked,
    status: wire.status,
    answeredBy: wire.answered_by ?? [],
  };
  if (wire.answer !== undefined && wire.answer !== null) question.answer = wire.answer;
  return question;
}

/**
 * Asks `llm` for the reply to `prompt` (after the system prompt) and reads it; a reply that is
 * not the JSON asked for is answered once with what is wrong with it, and a second such reply is
 * an {@link InvalidModelOutputError}.
 */
export async function askReply(
  llm: LLM,
  prompt: Prompt,
  cachePrefix: number,
  schema: Record<string, unknown>,
  options: AnalyzeOptions,
): Promise<WireReply> {
  const request: PromptTurn[] = [
    { role: "system", content: SYSTEM_PROMPT },
    { role: "user", content: prompt.text, cachePrefix },
  ];
  let attempt = await replyTo(llm, request, schema, options);
  if ("candidates" in attempt) return attempt;
  const repair: PromptTurn[] = [
    ...request,
    { role: "assistant", content: attempt.raw },
    {
      role: "user",
      content: `That reply was not valid: ${attempt.problem}. Answer again with only the JSON object described above.`,
    },
  ];
  options.onRepair?.();
  attempt = await replyTo(llm, repair, schema, options);
  if ("candidates" in attempt) return attempt;
  throw new InvalidModelOutputError(`${attempt.problem} (after one repair request)`, attempt.raw);
}

async function replyTo(
  llm: LLM,
  messages: PromptTurn[],
  schema: Record<string, unknown>,
  options: AnalyzeOptions,
): Promise<WireReply | { problem: string; raw: string }> {
  let value: unknown;
  try {
    value = await llm.chatJSON(messages, {
      schema,
      signal: options.signal,
      onUsage: options.onUsage,
    });
  } catch (error) {
    if (error instanceof InvalidModelOutputError) return { problem: error.reason, raw: error.raw };
    throw error;
  }
  const read = readReply(value);
  return "candidates" in read ? read : { problem: read.problem, raw: JSON.stringify(value) };
}
