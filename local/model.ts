/**
 * The model a local command extracts with (its kind, id and endpoint), and the model each kind
 * uses when `--model` is not given: what extraction configures and what a failed call names.
 */
import { DEFAULT_BEDROCK_MODEL_ID, type ExtractorKind } from "convoseg/knowledge/config";

/** Default models when `--model` is not given. */
export const DEFAULT_MODELS: Record<Exclude<ExtractorKind, "offline">, string> = {
  openai: "gpt-4o-mini",
  bedrock: DEFAULT_BEDROCK_MODEL_ID,
};

/** The model a local command extracts with. */
export interface LocalModel {
  extractor: ExtractorKind;
  modelId: string;
  /** The OpenAI-compatible base URL, or a Bedrock endpoint override. */
  endpoint?: string;
  /**
   * The OpenAI-compatible endpoint's key when not `OPENAI_API_KEY`: a stand-in for a server on
   * this machine that checks none (llama.cpp, Ollama).
   */
  apiKey?: string;
}
