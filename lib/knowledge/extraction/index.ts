/**
 * Extraction: the extractor seam (`Extractor`: structured turns in, candidate topics out), the
 * analyzer that implements it with an LLM (a port of the Go `fork` package,
 * `docs/specs/windows.md`), the seam model adapters implement, and the one parser of model
 * replies; the model adapters of `./llm/` and the offline extractor of `./offline/` re-exported.
 */
export type { Turn } from "../windows/index.js";
export {
  Analyzer,
  type AnalyzerOptions,
  type Route,
  replyTargets,
  type WindowSizing,
  windowCount,
} from "./analyzer.js";
export {
  addTrimmed,
  boundCandidate,
  boundQuestion,
  countTrimmed,
  DEFAULT_MAX_CANDIDATES,
  DEFAULT_MAX_TURN_CHARS,
  MAX_ANSWER_CHARS,
  MAX_QUESTION_CHARS,
  MAX_QUESTIONS,
  MAX_REASON_CHARS,
  MAX_TAG_CHARS,
  MAX_TAGS,
  MAX_TOPIC_CHARS,
} from "./bounds.js";
export { dedupeCandidates, normalizeTopic } from "./candidates.js";
export {
  ExtractionError,
  InvalidModelOutputError,
  isContextLengthError,
  isPermanentFailure,
  LLMError,
  type LLMFailureKind,
} from "./errors.js";
export type {
  Extraction,
  ExtractionTurn,
  ExtractOptions,
  Extractor,
  SegmentTerms,
  TermCounts,
  TermStatistics,
  TurnKind,
} from "./extractor.js";
export * from "./llm/index.js";
export * from "./offline/index.js";
export { parseModelJSON } from "./parse.js";
export {
  additionalPrompt,
  EXCERPT_END,
  EXCERPT_START,
  EXISTING_END,
  EXISTING_START,
  extractPrompt,
  PROMPT_VERSION,
  type Prompt,
  replySchema,
  SYSTEM_PROMPT,
} from "./prompts.js";
export { dedupeQuestions, normalizeQuestion } from "./questions.js";
export {
  type AuthoredTurn,
  mapTurnRange,
  promptString,
  renderIndices,
  renderTurns,
} from "./render.js";
export type {
  AnalyzeOptions,
  Candidate,
  ChatJSONOptions,
  LLM,
  LLMUsage,
  PromptTurn,
  QuestionCandidate,
  QuestionStatus,
  Trimmed,
  TrimmedField,
  UsageListener,
  WindowOutput,
  WindowOutputs,
  WindowUsage,
} from "./types.js";
export { QUESTION_STATUSES } from "./types.js";
export { addCall, NO_CALLS } from "./usage.js";
