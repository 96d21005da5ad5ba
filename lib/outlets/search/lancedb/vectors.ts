/**
 * The search index's document vectors: what of a document is embedded, the cache of vectors
 * kept inside the index's directory (keyed by the sha256 of the embedded text, one model per
 * cache) and the embedding of what the cache lacks, in batches with bounded concurrency.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import type * as lancedb from "@lancedb/lancedb";
import { Field, FixedSizeList, Float32, Schema, Utf8 } from "apache-arrow";
import type { Embedder } from "../../../knowledge/topics/index.js";
import type { SearchDocument } from "../documents.js";
import { SearchError } from "../errors.js";
import { lance } from "./load.js";

/** The table of cached vectors, beside the documents' table. */
const VECTORS_TABLE = "vectors";
/** The schema metadata key naming the model that made a table's vectors. */
export const MODEL_KEY = "convoseg.embeddings.model";
/** The most texts embedded anew by one build when not told. */
export const DEFAULT_MAX_EMBEDDED = 200_000;

/** What of a document is embedded: its title, where its words do not start with it, and its words. */
export function embeddedText(document: Pick<SearchDocument, "title" | "text">): string {
  const { title, text } = document;
  return title === "" || text.startsWith(title) ? text : `${title}\n${text}`;
}

/** The cache's key of an embedded text. */
export const textKey = (text: string): string => createHash("sha256").update(text).digest("hex");

/** A vector column of `dimensions` 32-bit floats. */
export const vectorType = (dimensions: number) =>
  new FixedSizeList(dimensions, new Field("item", new Float32(), true));

/** A table's vectors: the model and length its schema names; undefined when it has none. */
export async function tableVectors(
  table: lancedb.Table,
): Promise<{ model: string; dimensions: number } | undefined> {
  const schema = await table.schema();
  const model = schema.metadata.get(MODEL_KEY);
  const field = schema.fields.find((f) => f.name === "vector");
  if (model === undefined || field === undefined) return undefined;
  return { model, dimensions: (field.type as FixedSizeList).listSize };
}

/** The cached vectors in the index at `dir` of the `keys` wanted, and the model that made them. */
export async function cachedVectors(
  dir: string,
  keys: ReadonlySet<string>,
  model: string | undefined,
): Promise<{ model: string | undefined; vectors: Map<string, Float32Array> }> {
  const vectors = new Map<string, Float32Array>();
  if (!existsSync(dir)) return { model, vectors };
  const db = await (await lance()).connect(dir);
  if (!(await db.tableNames()).includes(VECTORS_TABLE)) return { model, vectors };
  const table = await db.openTable(VECTORS_TABLE);
  try {
    const cachedModel = (await table.schema()).metadata.get(MODEL_KEY);
    // Another model's vectors answer nothing of this one's: a fresh cache.
    if (cachedModel === undefined || (model !== undefined && cachedModel !== model))
      return { model, vectors };
    for await (const batch of table.query().select(["key", "vector"])) {
      const key = batch.getChild("key");
      const vector = batch.getChild("vector");
      for (let i = 0; i < batch.numRows; i++) {
        const k = key?.get(i) as string;
        if (keys.has(k)) vectors.set(k, Float32Array.from(vector?.get(i)?.toArray() ?? []));
      }
    }
    return { model: cachedModel, vectors };
  } finally {
    table.close();
  }
}

/** Writes `vectors` as the cache of the index being built in `db`, as `model`'s. */
export async function writeCache(
  db: lancedb.Connection,
  model: string,
  vectors: ReadonlyMap<string, Float32Array>,
): Promise<void> {
  const first = vectors.values().next().value;
  if (first === undefined) return;
  const schema = new Schema(
    [new Field("key", new Utf8(), false), new Field("vector", vectorType(first.length), false)],
    new Map([[MODEL_KEY, model]]),
  );
  // Made into rows a batch at a time: a vector as numbers takes twice its 32-bit floats' room.
  const entries = [...vectors];
  const BATCH = 10_000;
  const rows = (at: number) =>
    entries.slice(at, at + BATCH).map(([key, vector]) => ({ key, vector: Array.from(vector) }));
  const table = await db.createTable(VECTORS_TABLE, rows(0), { schema });
  for (let at = BATCH; at < entries.length; at += BATCH) await table.add(rows(at));
  table.close();
}

export interface EmbedOptions {
  /** Texts a call. Default 64. */
  batch?: number;
  /** Calls at once. Default 4. */
  concurrency?: number;
  signal?: AbortSignal;
}

/**
 * The vectors of `texts` (by key), asked `batch` at a time, `concurrency` calls at once; each a
 * 32-bit float vector of one length. A failed call fails them all, a `SearchError` naming the
 * model and how many documents were being embedded.
 */
export async function embedTexts(
  embedder: Embedder,
  texts: ReadonlyMap<string, string>,
  documents: number,
  options: EmbedOptions = {},
): Promise<Map<string, Float32Array>> {
  const batch = options.batch ?? 64;
  const concurrency = options.concurrency ?? 4;
  const entries = [...texts];
  const out = new Map<string, Float32Array>();
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < entries.length) {
      const chunk = entries.slice(next, next + batch);
      next += batch;
      const vectors = await embedder.embed(
        chunk.map(([, text]) => text),
        { signal: options.signal },
      );
      chunk.forEach(([key], i) => {
        out.set(key, Float32Array.from(vectors[i] ?? []));
      });
    }
  };
  try {
    await Promise.all(
      Array.from({ length: Math.min(concurrency, Math.ceil(entries.length / batch)) }, () =>
        worker().catch((error: unknown) => {
          failed = true;
          throw error;
        }),
      ),
    );
  } catch (error) {
    throw new SearchError(
      "SEARCH_EMBEDDING_FAILED",
      `search: embedding ${texts.size} texts of ${documents} documents with ${embedder.model} failed: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return out;
}
