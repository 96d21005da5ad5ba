/**
 * Extraction: the analyzer that turns a transcript into candidate topics with an LLM (a port of
 * the Go `fork` package, `docs/specs/windows.md`), the seam model adapters implement, and the
 * one parser of model replies, with the model adapters of `./llm/` re-exported.
 */
export type { Turn } from "../windows/index.js";
export {
  Analyzer,
  type AnalyzerOptions,
  type Route,
  type WindowSizing,
  windowCount,
} from "./analyzer.js";
export { dedupeCandidates, normalizeTopic } from "./candidates.js";
export {
  ExtractionError,
  InvalidModelOutputError,
  LLMError,
  type LLMFailureKind,
} from "./errors.js";
export * from "./llm/index.js";
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
} from "./prompts.js";
export { mapTurnRange, renderIndices, renderTurns } from "./render.js";
export type {
  AnalyzeOptions,
  Candidate,
  ChatJSONOptions,
  LLM,
  LLMUsage,
  PromptTurn,
  UsageListener,
  WindowOutput,
  WindowOutputs,
  WindowUsage,
} from "./types.js";
export { addCall, NO_CALLS } from "./usage.js";
