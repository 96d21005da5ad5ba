/**
 * The model adapters behind the extraction `LLM` seam: Amazon Bedrock (Converse),
 * OpenAI-compatible chat completions, and the offline keyphrase extractor that serves local runs
 * without a model.
 */
export {
  BedrockConverseLLM,
  type BedrockConverseLLMOptions,
  type BedrockOutputMode,
} from "./bedrock.js";
export {
  KEYPHRASE_EXTRACTOR_NAME,
  KeyphraseExtractor,
  type KeyphraseExtractorOptions,
  MissingExcerptError,
} from "./offline.js";
export {
  OpenAICompatibleLLM,
  type OpenAICompatibleLLMOptions,
  type OpenAIResponseFormat,
} from "./openai.js";
export { DEFAULT_TIMEOUT_MS } from "./options.js";
