/**
 * The OpenAI-compatible endpoint's API key, read from Secrets Manager or SSM when a call needs
 * it: kept for its cache age, read again after the provider refused it (a rotated key), and a
 * failed read is not kept (the next call reads again, rather than every call failing until the
 * next cold start).
 */
import { KnowledgeError } from "../errors.js";

export interface ApiKeyCache {
  /** The key: the cached one while younger than the cache age, else read now. */
  get(): Promise<string>;
  /** Forgets the cached key: the next `get` reads it again. */
  invalidate(): void;
}

/** One hour, as the Powertools parameter utilities cache by default. */
const DEFAULT_MAX_AGE_MS = 3_600_000;

/**
 * A cache of the key `read` returns. `where` names the secret or parameter in errors (never
 * the key itself).
 */
export function apiKeyCache(
  read: () => Promise<unknown>,
  options: { where: string; maxAgeMs?: number; now?: () => number },
): ApiKeyCache {
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
  const now = options.now ?? Date.now;
  let cached: { key: string; at: number } | undefined;
  let reading: Promise<string> | undefined;
  const fetchKey = async (): Promise<string> => {
    let value: unknown;
    try {
      value = await read();
    } catch (error) {
      throw new KnowledgeError(
        "KNOWLEDGE_API_KEY",
        `could not read the OpenAI API key at ${options.where}: ${(error as Error).name ?? "Error"}: ${(error as Error).message ?? String(error)} (it is read again by the next call)`,
        { cause: error },
      );
    }
    if (typeof value !== "string" || value === "") {
      throw new KnowledgeError(
        "KNOWLEDGE_API_KEY",
        `the OpenAI API key at ${options.where} is empty or not a string`,
      );
    }
    cached = { key: value, at: now() };
    return value;
  };
  return {
    get() {
      if (cached !== undefined && now() - cached.at < maxAgeMs) return Promise.resolve(cached.key);
      reading ??= fetchKey().finally(() => {
        reading = undefined;
      });
      return reading;
    },
    invalidate() {
      cached = undefined;
    },
  };
}
