/**
 * The vectors of a deployed channel table's documents, where the deployment names an embeddings
 * model (`SEARCH_EMBEDDINGS_MODEL`): a write embeds at most a bound of texts, what was learned
 * first (the conversation, its questions, the topics) and then messages in order; the vectors
 * the table already holds for the same words are kept, so a redaction or a retry embeds only
 * what changed. A document past the bound has no vector: it is found by its words alone.
 */
import type * as lancedb from "@lancedb/lancedb";
import type { Embedder } from "../../../knowledge/topics/index.js";
import type { SearchDocument } from "../documents.js";
import { SearchError } from "../errors.js";
import { quote } from "../query.js";
import { embeddedText, embedTexts, textKey } from "./vectors.js";

/** The most texts one write embeds anew when not told: a long segment's first messages. */
export const DEFAULT_MAX_EMBEDDED_PER_WRITE = 256;

/** What is embedded first when a write holds more than the bound. */
const PRIORITY: Record<SearchDocument["kind"], number> = {
  conversation: 0,
  question: 1,
  topic: 2,
  message: 3,
};

/**
 * The vector of each of `documents` (undefined: none), by `embedder`, reusing what `table` holds
 * for the same words and embedding at most `max` texts anew. A failed call is a `SearchError`.
 */
export async function documentVectors(
  embedder: Embedder,
  documents: readonly SearchDocument[],
  table: lancedb.Table | undefined,
  max: number,
): Promise<(Float32Array | undefined)[]> {
  const keys = documents.map((d) => textKey(embeddedText(d)));
  const known = table === undefined ? new Map() : await heldVectors(table, documents);
  const missing = new Map<string, string>();
  const order = documents
    .map((d, i) => ({ d, i }))
    .sort((a, b) => PRIORITY[a.d.kind] - PRIORITY[b.d.kind] || a.i - b.i);
  for (const { d, i } of order) {
    if (missing.size >= max) break;
    if (!known.has(keys[i])) missing.set(keys[i], embeddedText(d));
  }
  // One call: the embedder's own batching and concurrency (Titan's 4 requests at a time) apply.
  const once = { batch: missing.size, concurrency: 1 };
  if (missing.size > 0)
    for (const [key, vector] of await embedTexts(embedder, missing, documents.length, once))
      known.set(key, vector);
  return keys.map((key) => known.get(key));
}

/** The vectors `table` holds for `documents`' ids, by the key of the words they were made of. */
async function heldVectors(
  table: lancedb.Table,
  documents: readonly SearchDocument[],
): Promise<Map<string, Float32Array>> {
  const held = new Map<string, Float32Array>();
  if (documents.length === 0) return held;
  const rows = await table
    .query()
    .where(`id IN (${documents.map((d) => quote(d.id)).join(", ")}) AND vector IS NOT NULL`)
    .select(["title", "text", "vector"])
    .toArray();
  for (const row of rows as { title: string; text: string; vector: { toArray(): number[] } }[])
    held.set(textKey(embeddedText(row)), Float32Array.from(row.vector.toArray()));
  return held;
}

/** A `SearchError` when `vectors` are not `dimensions` long (another model under the same name). */
export function checkDimensions(
  vectors: readonly (Float32Array | undefined)[],
  dimensions: number,
  model: string,
): void {
  const other = vectors.find((v) => v !== undefined && v.length !== dimensions);
  if (other !== undefined)
    throw new SearchError(
      "SEARCH_EMBEDDING_FAILED",
      `search: ${model} gave a vector of ${other.length} numbers, the channel's table holds ${dimensions}`,
    );
}

/**
 * A `SearchError` when the table's vectors are another model's than the deployment's: its
 * queries would be compared with vectors of another space.
 */
export function mismatch(tableModel: string, model: string): SearchError {
  return new SearchError(
    "SEARCH_MODEL_MISMATCH",
    `search: a channel's table holds ${tableModel}'s vectors, SEARCH_EMBEDDINGS_MODEL is ${model}: set it back to ${tableModel}, or remove the index's tables and reextract to write them with ${model}`,
  );
}
