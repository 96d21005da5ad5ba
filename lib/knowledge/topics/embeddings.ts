/**
 * The embeddings matcher: topics whose embeddings' cosine similarity reaches a threshold name one
 * thing. Embedding is asynchronous and costs, merging is pure and synchronous, so the vectors are
 * computed first (`embedTopics`, through the {@link Embedder} port a model adapter implements)
 * and the matcher only compares them.
 */
import type { TopicMatcher } from "./merge.js";

/** A model that turns texts into vectors: one vector per text, in order, all of one length. */
export interface Embedder {
  /** Names the model, for errors and for caches keyed by model. */
  readonly model: string;
  embed(texts: readonly string[], options?: { signal?: AbortSignal }): Promise<number[][]>;
}

/** Titan's text embeddings model when not told. */
export const DEFAULT_TITAN_EMBEDDINGS_MODEL = "amazon.titan-embed-text-v2:0";

/** The similarity at or above which two topics merge when not told (measured: docs/topics). */
export const DEFAULT_SIMILARITY = 0.85;

/**
 * The most topics one merge embeds and compares pairwise when not told: comparing is quadratic
 * (2,000 topics of 1,024 dimensions are 2 × 10⁹ multiplications, about 2 s); the rest are merged
 * by tokens only.
 */
const DEFAULT_MAX_EMBEDDED_TOPICS = 2000;

/** A vector that is not a finite non-zero vector of the model's length, or a bad setting. */
export class EmbeddingError extends Error {
  override readonly name = "EmbeddingError";
  readonly code = "EMBEDDING_INVALID";
}

/**
 * Links the topics of `vectors` whose cosine similarity is at least `threshold` (0 to 1
 * exclusive of 0). A function of each pair alone, so the merge stays order-free; topics without
 * a vector are linked by nothing here.
 */
export function embeddingMatcher(
  vectors: ReadonlyMap<string, readonly number[]>,
  threshold: number = DEFAULT_SIMILARITY,
): TopicMatcher {
  if (!(threshold > 0 && threshold <= 1)) {
    throw new EmbeddingError(`similarity must be above 0 and at most 1 (got ${threshold})`);
  }
  const units = new Map<string, Float64Array>();
  let length: number | undefined;
  for (const [topic, vector] of vectors) {
    length ??= vector.length;
    units.set(topic, unit(units.size, vector, length));
  }
  return function* (topics) {
    const present = topics.filter((t) => units.has(t));
    const rows = present.map((t) => units.get(t) as Float64Array);
    for (let i = 0; i < rows.length; i++) {
      for (let j = i + 1; j < rows.length; j++) {
        if (dot(rows[i], rows[j]) >= threshold) yield [present[i], present[j]];
      }
    }
  };
}

/**
 * The vectors of `topics` (distinct, at most `maxTopics` of them, in the order given: give the
 * most supported first), asked in batches of `batch`, reusing and filling `cache` (keyed by
 * topic; one per model).
 */
export async function embedTopics(
  embedder: Embedder,
  topics: readonly string[],
  options: {
    batch?: number;
    maxTopics?: number;
    cache?: Map<string, number[]>;
    signal?: AbortSignal;
  } = {},
): Promise<Map<string, number[]>> {
  const batch = options.batch ?? 64;
  const chosen = [...new Set(topics)].slice(0, options.maxTopics ?? DEFAULT_MAX_EMBEDDED_TOPICS);
  const cache = options.cache ?? new Map<string, number[]>();
  const missing = chosen.filter((t) => !cache.has(t));
  for (let start = 0; start < missing.length; start += batch) {
    const texts = missing.slice(start, start + batch);
    const vectors = await embedder.embed(texts, { signal: options.signal });
    if (vectors.length !== texts.length) {
      throw new EmbeddingError(
        `${embedder.model} returned ${vectors.length} vectors for ${texts.length} topics`,
      );
    }
    for (const [i, text] of texts.entries()) cache.set(text, vectors[i]);
  }
  return new Map(chosen.map((t) => [t, cache.get(t) as number[]]));
}

/** `vector` at length 1; `index` names it in errors (a topic is chat-derived: never in a message). */
function unit(index: number, vector: readonly number[], length: number): Float64Array {
  const at = `vector ${index}`;
  if (vector.length !== length || length === 0) {
    throw new EmbeddingError(`${at} has ${vector.length} dimensions, not ${length}`);
  }
  const out = Float64Array.from(vector);
  const norm = Math.sqrt(dot(out, out));
  if (!(Number.isFinite(norm) && norm > 0)) {
    throw new EmbeddingError(`${at} is not a finite non-zero vector`);
  }
  for (let i = 0; i < out.length; i++) out[i] /= norm;
  return out;
}

function dot(a: Float64Array, b: Float64Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
}
