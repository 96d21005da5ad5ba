/**
 * The model adapters behind the extraction `LLM` seam. Amazon Bedrock (Converse) and
 * OpenAI-compatible chat completions.
 */
export { BedrockConverseLLM, type BedrockConverseLLMOptions } from "./bedrock.js";
export {
  BedrockTitanEmbedder,
  OpenAIEmbedder,
} from "./embeddings.js";
export { OpenAICompatibleLLM, type OpenAICompatibleLLMOptions } from "./openai.js";
export { DEFAULT_DEADLINE_MS } from "./options.js";
