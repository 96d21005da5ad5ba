/**
 * The search index on LanceDB (embedded, on disk; docs/search.md says why): one table of
 * {@link SearchDocument}s with a full-text index (BM25, English stemming) on their words, and,
 * built with an embedder, each document's vector, the model named in the table's metadata. The
 * query's words are one match query, never query syntax: chat text and a person's query are
 * words to look for, not operators. Asked with the same model, the keyword and the vector
 * rankings are fused (reciprocal rank fusion).
 */
import { randomBytes } from "node:crypto";
import { existsSync, renameSync, rmSync } from "node:fs";
import type * as lancedb from "@lancedb/lancedb";
import { Field, Float64, Schema, Utf8 } from "apache-arrow";
import type { Embedder } from "../../../knowledge/topics/index.js";
import type { SearchDocument, SearchHit, SearchKind } from "../documents.js";
import { SearchError } from "../errors.js";
import { reciprocalRankFusion } from "../fusion.js";
import { checkQuery, type SearchQuery, whereClause } from "../query.js";
import { snippet } from "../snippet/index.js";
import { lance } from "./load.js";
import {
  cachedVectors,
  DEFAULT_MAX_EMBEDDED,
  type EmbedOptions,
  embeddedText,
  embedTexts,
  MODEL_KEY,
  tableVectors,
  textKey,
  vectorType,
  writeCache,
} from "./vectors.js";

const TABLE = "documents";

const STRING_COLUMNS = [
  "id",
  "kind",
  "channel",
  "author",
  "authorId",
  "title",
  "text",
  "status",
  "segment",
  "evidence",
  "permalink",
] as const;

const COLUMNS = [...STRING_COLUMNS, "ts"];

/**
 * The documents' schema; with `vectors`, a vector column of their length and their model
 * (`nullable`: a document may have none, found by its words alone).
 */
export function schemaOf(vectors?: {
  model: string;
  dimensions: number;
  nullable?: boolean;
}): Schema {
  const fields = [
    ...STRING_COLUMNS.map((name) => new Field(name, new Utf8(), false)),
    new Field("ts", new Float64(), false),
  ];
  if (vectors === undefined) return new Schema(fields);
  return new Schema(
    [...fields, new Field("vector", vectorType(vectors.dimensions), vectors.nullable ?? false)],
    new Map([[MODEL_KEY, vectors.model]]),
  );
}

/** The documents' full-text index: BM25 over their words, stemmed as English, stop words left out. */
export const fullTextIndex = (lancedb: typeof import("@lancedb/lancedb")) =>
  lancedb.Index.fts({
    withPosition: false,
    stem: true,
    language: "English",
    removeStopWords: true,
    lowercase: true,
  });

type Row = Record<(typeof STRING_COLUMNS)[number], string> & { ts: number };

export const rowOf = (d: SearchDocument, vector?: Float32Array): Row & { vector?: number[] } => ({
  ...d,
  evidence: JSON.stringify(d.evidence),
  ...(vector !== undefined && { vector: Array.from(vector) }),
});

export interface BuildOptions extends EmbedOptions {
  /** Embeds every document too, for hybrid search with the same model. */
  embedder?: Embedder;
  /** The most texts one build embeds anew (not from the cache); default 200,000. */
  maxEmbedded?: number;
  /** Documents from which the vectors get an index; default {@link VECTOR_INDEX_ROWS}. */
  vectorIndexRows?: number;
}

/**
 * From this many documents the vectors get an IVF-PQ index: a query then reads the nearest
 * partitions and re-ranks a few times its page by the full vectors, instead of scanning every
 * vector (0.4 s a query at 228k documents). Below it a scan is quick, and exact.
 */
const VECTOR_INDEX_ROWS = 50_000;
/** Partitions a query reads, and how many times its depth the index's candidates re-ranked. */
const NPROBES = 50;
const REFINE_FACTOR = 30;

/** What a build did: its documents, and with an embedder, how many texts it embedded anew. */
export interface BuildSummary {
  documents: number;
  /** The model whose vectors the index holds; absent when it holds none. */
  model?: string;
  /** Texts embedded anew, and texts whose vectors came from the cache. */
  embedded: number;
  cached: number;
}

/** The vectors of an index's documents: their model, and their length. */
interface IndexVectors {
  model: string;
  dimensions: number;
}

export class LanceSearchIndex {
  private constructor(
    private readonly lancedb: typeof import("@lancedb/lancedb"),
    private readonly table: lancedb.Table,
    /** The model of the index's vectors; undefined when it holds none. */
    readonly vectors: IndexVectors | undefined,
  ) {}

  /**
   * Writes `documents` as the index in `dir`, replacing what was there: built beside it and
   * moved in, so that a failed build (a permanent embedding error among them) leaves the old
   * one, and the old one's files are removed, not kept as an older version. The vectors of texts
   * the old index's cache holds (same model) are reused, not asked again; the new cache holds
   * the current documents' vectors only.
   */
  static async build(
    dir: string,
    documents: readonly SearchDocument[],
    options: BuildOptions = {},
  ): Promise<BuildSummary> {
    const { embedder } = options;
    const keys = documents.map((d) => textKey(embeddedText(d)));
    const cache = await cachedVectors(dir, new Set(keys), embedder?.model);
    const vectors = cache.vectors;
    const cached = vectors.size;
    let embedded = 0;
    let indexVectors: IndexVectors | undefined;
    if (embedder !== undefined && documents.length > 0) {
      const missing = new Map<string, string>();
      keys.forEach((key, i) => {
        if (!vectors.has(key)) missing.set(key, embeddedText(documents[i] as SearchDocument));
      });
      const max = options.maxEmbedded ?? DEFAULT_MAX_EMBEDDED;
      if (missing.size > max)
        throw new SearchError(
          "SEARCH_TOO_MANY_TO_EMBED",
          `search: ${missing.size} texts of ${documents.length} documents to embed with ${embedder.model}, more than the ${max} one build embeds (maxEmbedded): search without embeddings, or raise the limit`,
        );
      for (const [key, vector] of await embedTexts(embedder, missing, documents.length, options))
        vectors.set(key, vector);
      embedded = missing.size;
      const dimensions = vectors.get(keys[0] as string)?.length ?? 0;
      if (dimensions === 0 || keys.some((key) => vectors.get(key)?.length !== dimensions))
        throw new SearchError(
          "SEARCH_EMBEDDING_FAILED",
          `search: ${embedder.model}'s vectors of ${documents.length} documents are not all of one length`,
        );
      indexVectors = { model: embedder.model, dimensions };
    }
    const schema = schemaOf(indexVectors);
    const row = (d: SearchDocument, i: number) =>
      rowOf(d, indexVectors === undefined ? undefined : vectors.get(keys[i] as string));
    const building = `${dir}.building-${randomBytes(4).toString("hex")}`;
    try {
      const lancedb = await lance();
      const db = await lancedb.connect(building);
      const BATCH = 10_000;
      const rows = (at: number) => documents.slice(at, at + BATCH).map((d, i) => row(d, at + i));
      // Made with its first rows: adding to an empty table logs a warning of its own.
      const table =
        documents.length === 0
          ? await db.createEmptyTable(TABLE, schema)
          : await db.createTable(TABLE, rows(0), { schema });
      for (let at = BATCH; at < documents.length; at += BATCH) await table.add(rows(at));
      await table.createIndex("text", { config: fullTextIndex(lancedb) });
      if (
        indexVectors !== undefined &&
        documents.length >= (options.vectorIndexRows ?? VECTOR_INDEX_ROWS)
      ) {
        await table.createIndex("vector", {
          config: lancedb.Index.ivfPq({ distanceType: "cosine" }),
        });
      }
      table.close();
      // The cache outlives a build without embeddings, but only for the documents it has now.
      const cacheModel = embedder?.model ?? cache.model;
      if (cacheModel !== undefined) await writeCache(db, cacheModel, vectors);
      rmSync(dir, { recursive: true, force: true });
      renameSync(building, dir);
    } finally {
      rmSync(building, { recursive: true, force: true });
    }
    return {
      documents: documents.length,
      ...(indexVectors !== undefined && { model: indexVectors.model }),
      embedded,
      cached: indexVectors === undefined ? 0 : cached,
    };
  }

  /** The index in `dir`, or undefined when none was built there. */
  static async open(dir: string): Promise<LanceSearchIndex | undefined> {
    if (!existsSync(dir)) return undefined;
    const db = await (await lance()).connect(dir);
    if (!(await db.tableNames()).includes(TABLE)) return undefined;
    return LanceSearchIndex.ofTable(await db.openTable(TABLE));
  }

  /** A search over `table`, a table of documents as {@link build} writes them. */
  static async ofTable(table: lancedb.Table): Promise<LanceSearchIndex> {
    return new LanceSearchIndex(await lance(), table, await tableVectors(table));
  }

  /** The model whose vectors the index holds; undefined when it holds none. */
  get model(): string | undefined {
    return this.vectors?.model;
  }

  /**
   * The best hits for `query`, best first; a bad query is a `SearchError` naming what is wrong.
   * With `embedder`, on an index with vectors, the keyword and the nearest-vector rankings
   * (each filtered alike) are fused, or with `ranking: "semantic"` the nearest vectors alone are
   * the hits (scored by cosine similarity); an embedder of another model than the index's is a
   * `SearchError` naming both.
   */
  async search(
    query: SearchQuery,
    options: { embedder?: Embedder; ranking?: "hybrid" | "semantic"; signal?: AbortSignal } = {},
  ): Promise<SearchHit[]> {
    const { text, limit, offset } = checkQuery(query);
    const where = whereClause(query);
    const { embedder } = options;
    if (embedder === undefined || this.vectors === undefined) {
      const rows = await read(this.keywordQuery(text, where).limit(limit).offset(offset));
      return rows.map((row) => hitOf(row, text, row._score));
    }
    if (embedder.model !== this.vectors.model)
      throw new SearchError(
        "SEARCH_MODEL_MISMATCH",
        `search: the index's vectors are ${this.vectors.model}'s, the query's embeddings ${embedder.model}'s: ask with ${this.vectors.model}, or build the index again with ${embedder.model}`,
      );
    const vector = await this.queryVector(embedder, text, options.signal);
    let nearest = this.table
      .query()
      .nearestTo(vector)
      .distanceType("cosine")
      // Used where the vectors have an index (VECTOR_INDEX_ROWS); a scan ignores them.
      .nprobes(NPROBES)
      .refineFactor(REFINE_FACTOR)
      .select([...COLUMNS, "_distance"]);
    if (where !== undefined) nearest = nearest.where(where);
    if (options.ranking === "semantic") {
      const rows = await read(nearest.limit(limit).offset(offset));
      return rows.map((row) => hitOf(row, text, 1 - Number(row._distance)));
    }
    // Each list as deep as the page's end: RRF's page is then the fused lists' slice.
    const depth = offset + limit;
    nearest = nearest.limit(depth);
    const [keyword, semantic] = await Promise.all([
      read(this.keywordQuery(text, where).limit(depth)),
      read(nearest),
    ]);
    return reciprocalRankFusion([keyword, semantic], (row) => row.id)
      .slice(offset, offset + limit)
      .map(({ item, score }) => hitOf(item, text, score));
  }

  /** The query's words as one match query on the documents' words, filtered by `where`. */
  private keywordQuery(text: string, where: string | undefined) {
    const search = this.table
      .search(new this.lancedb.MatchQuery(text, "text"), "fts")
      .select([...COLUMNS, "_score"]) as lancedb.Query;
    return where === undefined ? search : search.where(where);
  }

  /** The query's vector, of the index's length, or a `SearchError` saying why not. */
  private async queryVector(embedder: Embedder, text: string, signal?: AbortSignal) {
    let vector: number[] | undefined;
    try {
      [vector] = await embedder.embed([text], { signal });
    } catch (error) {
      throw new SearchError(
        "SEARCH_EMBEDDING_FAILED",
        `search: embedding the query with ${embedder.model} failed: ${(error as Error).message}`,
        { cause: error },
      );
    }
    const dimensions = this.vectors?.dimensions;
    if (vector?.length !== dimensions)
      throw new SearchError(
        "SEARCH_EMBEDDING_FAILED",
        `search: ${embedder.model} gave the query a vector of ${vector?.length ?? 0} numbers, the index's have ${dimensions}`,
      );
    return vector;
  }

  close(): void {
    this.table.close();
  }
}

type FoundRow = Row & { _score?: number; _distance?: number };

/** The rows `query` finds, or a `SearchError` when the index cannot be read. */
async function read(query: { toArray(): Promise<unknown[]> }): Promise<FoundRow[]> {
  try {
    return (await query.toArray()) as FoundRow[];
  } catch (error) {
    throw new SearchError(
      "SEARCH_FAILED",
      `search: the index could not be read (${(error as Error).message})`,
      { cause: error },
    );
  }
}

/** A found row as a hit scored `score`, its snippet marking the query's words. */
function hitOf(row: FoundRow, query: string, score: unknown): SearchHit {
  const {
    text: words,
    evidence,
    _score,
    _distance,
    ...rest
  } = row as FoundRow & {
    _distance?: number;
  };
  const { text: shown, marks } = snippet(words, query);
  return {
    ...rest,
    kind: rest.kind as SearchKind,
    evidence: JSON.parse(evidence) as string[],
    score: typeof score === "number" ? score : 0,
    snippet: shown,
    marks,
  };
}
