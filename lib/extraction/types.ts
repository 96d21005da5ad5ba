/**
 * The extraction vocabulary: what an LLM is asked for (candidate topics of a window of turns) and
 * the narrow seam every model adapter implements.
 */
import type { Turn } from "../windows/index.js";

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

export interface ChatJSONOptions {
  /** The JSON schema the reply must follow (adapters ask the provider to enforce it). */
  schema?: Record<string, unknown>;
  signal?: AbortSignal;
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
