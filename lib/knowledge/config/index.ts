/**
 * The extract function's configuration. Its environment variables, their defaults and bounds, the
 * routes and extractors it may be set to, and the reader that validates them all at once.
 */
export {
  ANALYZER_DEFAULTS,
  type ApiKeySource,
  DEFAULT_BEDROCK_MODEL_ID,
  EXTRACT_BOUNDS,
  EXTRACT_DEFAULTS,
  EXTRACTORS,
  type ExtractFunctionConfig,
  type ExtractorKind,
  type ExtractVariable,
  type OptionalExtractVariable,
  ROUTES,
  readExtractConfig,
  readTokenBudgets,
} from "./config.js";
