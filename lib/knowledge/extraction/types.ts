/**
 * The extraction vocabulary: what an LLM is asked for (candidate topics of a window of turns) and
 * the narrow seam every model adapter implements.
 */
import type { Turn } from "../windows/index.js";
import type { AuthoredTurn } from "./prompts/render.js";

/** A topic worth remembering, with the turns that support it. */
export interface Candidate {
  topic: string;
  reason: string;
  /** The model's confidence, 0 to 1. */
  confidence: number;
  tags: string[];
  /** 0-based indexes into the turns given to `Analyzer.analyze` (first, last), or null when unknown. */
  turnRange: [number, number] | null;
  /** A subjective preference or opinion rather than a checkable fact. */
  subjective: boolean;
  /** The model's verdict in selective mode; absent when it gave none (treated as worthy). */
  wikiWorthy?: boolean;
}

/** What became of a question within its segment. */
export const QUESTION_STATUSES = ["answered", "unanswered", "unclear"] as const;
export type QuestionStatus = (typeof QUESTION_STATUSES)[number];

/** A question asked in a window, and what answered it (turn indexes as `Candidate.turnRange`). */
export interface QuestionCandidate {
  /** In the asker's words, shortened. */
  question: string;
  /** 0-based index of the asking turn. */
  asked: number;
  status: QuestionStatus;
  /** The answer, summarized; absent when there is none. */
  answer?: string;
  /** Indexes of the answering turns, ascending; empty unless `answered`. */
  answeredBy: number[];
}

export interface ChatJSONOptions {
  /** The JSON schema the reply must follow (adapters ask the provider to enforce it). */
  schema?: Record<string, unknown>;
  signal?: AbortSignal;
  /** Called once for this call when it got an answer, besides the adapter's own listener. */
  onUsage?: UsageListener;
}

/**
 * A chat model that answers in JSON. Resolves to the parsed reply; rejects with an
 * {@link LLMError} when the provider fails, or an {@link InvalidModelOutputError} when the reply
 * is not JSON.
 */
export interface LLM {
  chatJSON(messages: readonly Turn[], options?: ChatJSONOptions): Promise<unknown>;
}

/**
 * A turn of a prompt that may say how much of its content (UTF-16 code units from the start) is
 * the same as in the previous request: adapters of providers with prompt caching put a cache
 * point there. Any `Turn` is a valid prompt turn.
 */
export interface PromptTurn extends Turn {
  cachePrefix?: number;
}

/** Tokens of one call, as the provider reports them. */
export interface LLMUsage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens read from the provider's prompt cache. */
  cacheReadTokens: number;
  /** Input tokens written to the prompt cache. */
  cacheWriteTokens: number;
}

/** Called by adapters once per call that got an answer (also for a reply that is not JSON). */
export type UsageListener = (usage: LLMUsage, call: { model: string; latencyMs: number }) => void;

/** What a window's answer cost: its calls (a repair request included) and their tokens. */
export interface WindowUsage extends LLMUsage {
  calls: number;
}

/**
 * What the bounds cut, by what was cut: `turnTexts` turns whose text a prompt showed cut;
 * `topics`, `reasons` and `tags` fields cut to their length (a tag past the count dropped counts
 * too); `candidates` dropped past a window's cap; `questionTexts` and `answers` question fields
 * cut to their length; `questions` dropped past a window's cap, or for a shape or turn numbers
 * that cannot be read. Only what was cut appears.
 */
export type TrimmedField =
  | "turnTexts"
  | "topics"
  | "reasons"
  | "tags"
  | "candidates"
  | "questionTexts"
  | "answers"
  | "questions";
export type Trimmed = Partial<Record<TrimmedField, number>>;

/**
 * A window's accepted reply (candidates as the model numbered them, held to their bounds), what
 * it cost, and what the bounds cut from it (absent when nothing).
 */
export interface WindowOutput {
  candidates: Candidate[];
  /** The window's questions; absent on replies stored before questions were asked for. */
  questions?: QuestionCandidate[];
  usage: WindowUsage;
  trimmed?: Trimmed;
}

/**
 * Where the analyzer keeps the accepted reply of each window, by the window's prompt text, so
 * that a retry after a failure or a crash asks again only for the windows without one.
 */
export interface WindowOutputs {
  get(prompt: string): Promise<WindowOutput | undefined>;
  put(prompt: string, output: WindowOutput): Promise<void>;
}

export interface AnalyzeOptions {
  signal?: AbortSignal;
  /** Stored window replies to reuse, and where to store new ones (default: none). */
  outputs?: WindowOutputs;
  /** Called for every model call that got an answer, a rejected one included. */
  onUsage?: UsageListener;
  /** Called when a reply was not valid and the model is asked once more. */
  onRepair?: () => void;
  /**
   * A thread's root, for a segment of a thread's replies: rendered before every window's turns,
   * marked as context (not a turn, never cited). Default: none.
   */
  context?: AuthoredTurn;
}
