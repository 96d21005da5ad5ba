/**
 * Extraction of topics and questions from a segment's turns, by a model or without one. The
 * extractor seam (`Extractor`: structured turns in, candidates out), the analyzer that implements
 * it with an LLM (a port of the Go `fork` package, `docs/specs/windows.md`), the seam model
 * adapters implement, and the one parser of model replies. The adapters are `./llm/`, the
 * offline extractor `./offline/`, the prompts `./prompts/`, the caps on a reply `./bounds/`.
 */
export type { Turn } from "../windows/index.js";
export {
  Analyzer,
  type AnalyzerOptions,
  type Route,
  replyTargets,
  windowCount,
} from "./analyzer.js";
export { dedupeCandidates, normalizeTopic } from "./candidates.js";
export {
  ExtractionError,
  InvalidModelOutputError,
  isContextLengthError,
  isPermanentFailure,
  LLMError,
} from "./errors.js";
export type {
  /** @public Part of this entry point's API for callers outside the repository. */
  Extraction,
  ExtractionTurn,
  /** @public */
  ExtractOptions,
  Extractor,
  SegmentTerms,
  TermCounts,
  TermStatistics,
} from "./extractor.js";
export { parseModelJSON } from "./parse.js";
export { dedupeQuestions, normalizeQuestion } from "./questions.js";
export type {
  /** @public */
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
