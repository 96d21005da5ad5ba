/**
 * The model adapters behind the extraction `LLM` seam: Amazon Bedrock (Converse) and
 * OpenAI-compatible chat completions.
 */
export {
  BedrockConverseLLM,
  type BedrockConverseLLMOptions,
  type BedrockOutputMode,
} from "./bedrock.js";
export {
  BedrockTitanEmbedder,
  type BedrockTitanEmbedderOptions,
  DEFAULT_TITAN_EMBEDDINGS_MODEL,
  OpenAIEmbedder,
  type OpenAIEmbedderOptions,
} from "./embeddings.js";
export {
  OpenAICompatibleLLM,
  type OpenAICompatibleLLMOptions,
  type OpenAIResponseFormat,
} from "./openai.js";
export { DEFAULT_DEADLINE_MS, DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_TIMEOUT_MS } from "./options.js";
