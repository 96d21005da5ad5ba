/**
 * The port through which a pipeline may ask someone else (a language model, in
 * `convoseg/knowledge/links`) about the links its model was least sure of. Data only: the
 * messages are quoted, never prompt structure; how they are shown is the advisor's business.
 */
import type { LinkChoice, LinkDecision } from "./decision.js";

/** A message as an advisor is shown it: who wrote what, when. */
export interface AdvisedMessage {
  readonly id: string;
  readonly author: string;
  readonly text: string;
  readonly ts: number;
}

/** A message whose link was unsure, and the earlier messages it may answer, best first. */
export interface LinkQuestion {
  readonly message: AdvisedMessage;
  /** The candidate parents the model ranked best; starting a conversation is always an option. */
  readonly candidates: readonly AdvisedMessage[];
}

/** An advisor's answer for one question: the parent chosen, or null for "starts one". */
export interface LinkAnswer {
  readonly id: string;
  readonly parent: string | null;
}

export interface LinkAdvisor {
  /** Inferred links whose margin (`LinkDecision.margin`) is below this are asked. */
  readonly margin: number;
  /** Candidate parents shown per question, at most. */
  readonly candidates: number;
  /** Questions per channel per tick, at most: the rest keep the model's choice. */
  readonly batch: number;
  /** How long a pipeline waits for the answers before the model's choices stand. */
  readonly timeoutMs: number;
  /**
   * Answers some of `questions` (one call, or none when a spend bound is reached: it may reject).
   * An answer naming a message that was not offered, or a question not asked, is ignored.
   */
  ask(
    channel: string,
    questions: readonly LinkQuestion[],
    signal: AbortSignal,
  ): Promise<readonly LinkAnswer[]>;
}

/**
 * An unsure decision as a question: its message and its best candidate parents (`options`, the
 * linker's `alternatives`) that `known` can quote, at most `candidates`; none when the message or
 * every candidate is unknown.
 */
export function questionOf(
  decision: LinkDecision,
  known: ReadonlyMap<string, AdvisedMessage>,
  candidates: number,
): LinkQuestion | undefined {
  const message = known.get(decision.id);
  const shown = (decision.options ?? [])
    .flatMap((id) => (id === null ? [] : [known.get(id)]))
    .filter((m): m is AdvisedMessage => m !== undefined)
    .slice(0, candidates);
  return message === undefined || shown.length === 0 ? undefined : { message, candidates: shown };
}

/**
 * The answers a linker may take, as choices by message id: the first answer to a question asked
 * that names a candidate shown to it, or null; any other is ignored.
 */
export function takenAnswers(
  questions: readonly LinkQuestion[],
  answers: readonly LinkAnswer[],
): Map<string, LinkChoice> {
  const asked = new Map(questions.map((q) => [q.message.id, q]));
  const taken = new Map<string, LinkChoice>();
  for (const { id, parent } of answers) {
    const question = asked.get(id);
    if (question === undefined || taken.has(id)) continue;
    if (parent !== null && !question.candidates.some((c) => c.id === parent)) continue;
    taken.set(id, { parent });
  }
  return taken;
}
