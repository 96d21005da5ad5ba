/**
 * The deployed search index: one LanceDB database (`s3://bucket/prefix`, or a directory), one
 * table per channel, named by a hash of the channel's id (an id is never a table name). A
 * channel's only writer is the extraction of its segments (one FIFO group per channel), so
 * channels never contend; an erasure rewrites only the tables of the channels it touches. With
 * an embedder, documents get vectors (`./channel-vectors.ts`) and a search fuses the keyword and
 * the nearest-vector rankings across the channels, as a workspace's index does.
 */
import { createHash } from "node:crypto";
import type * as lancedb from "@lancedb/lancedb";
import type { Embedder } from "../../../knowledge/topics/index.js";
import type { SearchDocument, SearchHit } from "../documents.js";
import { SearchError } from "../errors.js";
import { reciprocalRankFusion } from "../fusion.js";
import { checkQuery, MAX_HITS, quote, type SearchQuery } from "../query.js";
import {
  checkDimensions,
  DEFAULT_MAX_EMBEDDED_PER_WRITE,
  documentVectors,
  mismatch,
} from "./channel-vectors.js";
import { fullTextIndex, LanceSearchIndex, rowOf, schemaOf } from "./lancedb.js";
import { lance } from "./load.js";
import { tableVectors } from "./vectors.js";

const TABLE_PREFIX = "channel_";
/** The full-text index's name, as LanceDB names an index on `text`. */
const TEXT_INDEX = "text_idx";
/** Past this many documents written since the index was merged, a write merges them in. */
const MAX_UNINDEXED = 5_000;
/** Old versions a routine merge removes: older than a day (an erasure removes them all). */
const ROUTINE_CLEANUP_MS = 24 * 60 * 60 * 1000;
/** Channel tables one search reads at once. */
const SEARCH_CONCURRENCY = 8;

export interface ChannelIndexesOptions {
  /** The object store's settings (region, endpoint, …), as LanceDB takes them. */
  storageOptions?: Record<string, string>;
  /** The clock (default: the wall clock). */
  now?: () => number;
  /**
   * How long a document is kept after its time (`ts`), in ms: older ones are never found, and
   * a write of their channel removes them. Default: kept.
   */
  retentionMs?: number;
  /**
   * How stale a read may be, in seconds: 0 (the default) sees every commit at once, as a writer
   * must; a reader (the API) that may lag a few seconds saves a listing of each table's versions,
   * and of the tables, per query.
   */
  readConsistencySeconds?: number;
  /**
   * The embeddings model (`SEARCH_EMBEDDINGS_MODEL`): a write gives its documents vectors, and a
   * search fuses the keyword and nearest-vector rankings. Default: keywords only. A table
   * written without one (no vector column) is searched by keywords until it is made anew.
   */
  embedder?: Embedder;
  /** The most texts one write embeds anew (default {@link DEFAULT_MAX_EMBEDDED_PER_WRITE}). */
  maxEmbeddedPerWrite?: number;
}

export class LanceChannelIndexes {
  private readonly tables = new Map<string, lancedb.Table>();
  private connecting: Promise<lancedb.Connection> | undefined;
  private readonly now: () => number;

  /**
   * The index at `uri`: a directory, or `s3://bucket/prefix`. Connected at first use (a failed
   * connection is tried again by the next call); nothing is written until a write.
   */
  constructor(
    private readonly uri: string,
    private readonly options: ChannelIndexesOptions = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  private db(): Promise<lancedb.Connection> {
    this.connecting ??= lance()
      .then((lancedb) =>
        // By default every read sees the latest commit: another function's writes at once.
        lancedb.connect(this.uri, {
          readConsistencyInterval: this.options.readConsistencySeconds ?? 0,
          ...(this.options.storageOptions && { storageOptions: this.options.storageOptions }),
        }),
      )
      .catch((error: unknown) => {
        this.connecting = undefined;
        throw error;
      });
    return this.connecting;
  }

  /** The table name of `channel`: a hash, so that no id, however written, names a table. */
  static tableOf(channel: string): string {
    return TABLE_PREFIX + createHash("sha256").update(channel).digest("hex").slice(0, 40);
  }

  private async open(channel: string): Promise<lancedb.Table | undefined> {
    const name = LanceChannelIndexes.tableOf(channel);
    const known = this.tables.get(name);
    if (known !== undefined) return known;
    const db = await this.db();
    if (!(await db.tableNames()).includes(name)) return undefined;
    const table = await db.openTable(name);
    this.tables.set(name, table);
    return table;
  }

  /**
   * Makes `documents` a segment's documents in `channel`: each written (replacing the one of the
   * same id), and the segment's other documents but topics removed (a message deleted, a
   * question the extraction no longer finds). One commit: a reader sees the old ones or the new.
   */
  async replaceSegment(
    channel: string,
    segmentId: string,
    documents: readonly SearchDocument[],
  ): Promise<void> {
    for (const d of documents) {
      if (d.channel !== channel)
        throw new SearchError(
          "SEARCH_WRONG_CHANNEL",
          `search: document ${d.id} is of another channel than the one written (${d.channel})`,
        );
    }
    let table = await this.open(channel);
    if (table === undefined && documents.length === 0) return;
    const { rows, vectors } = await this.rowsOf(table, documents);
    if (table === undefined) {
      table = await this.create(channel, rows, vectors);
    } else {
      const others = `segment = ${quote(segmentId)} AND kind <> 'topic'`;
      if (rows.length === 0) await table.delete(others);
      else
        await table
          .mergeInsert("id")
          .whenMatchedUpdateAll()
          .whenNotMatchedInsertAll()
          .whenNotMatchedBySourceDelete({ where: others })
          .execute(rows);
    }
    await this.expire(table);
    await this.mergeIndex(table);
  }

  /**
   * `documents` as rows of `table` (undefined: about to be made): with vectors where the
   * embedder is set and the table has a vector column or is new; without, keywords only.
   */
  private async rowsOf(table: lancedb.Table | undefined, documents: readonly SearchDocument[]) {
    const { embedder } = this.options;
    const held = table === undefined ? undefined : await tableVectors(table);
    // A table written before the model was set keeps to keywords; one with vectors gets nulls.
    if (embedder === undefined || documents.length === 0 || (table !== undefined && !held)) {
      const none = held === undefined ? {} : { vector: null };
      return { rows: documents.map((d) => ({ ...rowOf(d), ...none })), vectors: undefined };
    }
    if (held !== undefined && held.model !== embedder.model)
      throw mismatch(held.model, embedder.model);
    const max = this.options.maxEmbeddedPerWrite ?? DEFAULT_MAX_EMBEDDED_PER_WRITE;
    const vectors = await documentVectors(embedder, documents, table, max);
    const dimensions = held?.dimensions ?? vectors.find((v) => v !== undefined)?.length ?? 0;
    checkDimensions(vectors, dimensions, embedder.model);
    return {
      rows: documents.map((d, i) => ({ ...rowOf(d), vector: rowOf(d, vectors[i]).vector ?? null })),
      vectors: { model: embedder.model, dimensions, nullable: true },
    };
  }

  /** The oldest time a document may have, or undefined when documents are kept. */
  private horizon(): number | undefined {
    const { retentionMs } = this.options;
    return retentionMs === undefined ? undefined : this.now() - retentionMs;
  }

  /** Removes the documents past the retention (a count first: a delete is a commit). */
  private async expire(table: lancedb.Table) {
    const horizon = this.horizon();
    if (horizon === undefined) return;
    const expired = `ts < ${horizon}`;
    if ((await table.countRows(expired)) > 0) await table.delete(expired);
  }

  private async create(
    channel: string,
    rows: Record<string, unknown>[],
    vectors: Parameters<typeof schemaOf>[0],
  ) {
    const name = LanceChannelIndexes.tableOf(channel);
    // existOk: a writer that lost a race to create it adds to the winner's table.
    const table = await (await this.db()).createEmptyTable(name, schemaOf(vectors), {
      mode: "create",
      existOk: true,
    });
    await table.add(rows);
    this.tables.set(name, table);
    return table;
  }

  /** Builds the full-text index, or merges into it what was written since, past a bound. */
  private async mergeIndex(table: lancedb.Table) {
    const stats = await table.indexStats(TEXT_INDEX);
    if (stats === undefined) {
      await table.createIndex("text", { config: fullTextIndex(await lance()) });
      return;
    }
    // Unindexed documents are found too (searched whole); the merge keeps that scan short.
    if (stats.numUnindexedRows < MAX_UNINDEXED) return;
    // Lance dates its versions by the wall clock, whatever clock retention is measured by.
    await table.optimize({ cleanupOlderThan: new Date(Date.now() - ROUTINE_CLEANUP_MS) });
  }

  /**
   * Removes `channel`'s documents that cite one of `messageIds` (a message's own, its segment's,
   * a question or topic with it as evidence) or that one of `authors` (names or ids) wrote, and
   * says which segments they were of.
   */
  async forget(
    channel: string,
    messageIds: readonly string[],
    authors: readonly string[] = [],
  ): Promise<string[]> {
    const cited = messageIds.map((id) => `strpos(evidence, ${quote(JSON.stringify(id))}) > 0`);
    const wrote = authors.flatMap((a) => [`author = ${quote(a)}`, `authorId = ${quote(a)}`]);
    return this.removeWhere(channel, [...cited, ...wrote]);
  }

  /**
   * Removes `channel`'s documents but messages (what was learned: conversations, questions,
   * topics) whose words name one of `names`, in any case, and says which segments they were of.
   */
  async forgetNaming(channel: string, names: readonly string[]): Promise<string[]> {
    const named = names.flatMap((name) => {
      const word = quote(name.toLowerCase());
      return [`strpos(lower(text), ${word}) > 0`, `strpos(lower(title), ${word}) > 0`];
    });
    return this.removeWhere(channel, named, "kind <> 'message'");
  }

  /** Deletes the rows matching any of `any` (and `all`); the segments they were of. */
  private async removeWhere(channel: string, any: readonly string[], all?: string) {
    const table = await this.open(channel);
    if (table === undefined || any.length === 0) return [];
    const where = `(${any.join(" OR ")})${all === undefined ? "" : ` AND ${all}`}`;
    const rows = await table.query().where(where).select(["segment"]).toArray();
    if (rows.length === 0) return [];
    await table.delete(where);
    return [...new Set(rows.map((row) => String(row.segment)))];
  }

  /**
   * Rewrites `channel`'s table from its current documents alone and removes every older version
   * and index file: what `forget` removed is then nowhere on disk (a deletion only marks rows).
   * A write committed by another process during the rewrite is lost: erasures are rare, and a
   * segment written then is indexed again by its next extraction (`reextract`).
   */
  async purge(channel: string): Promise<void> {
    const table = await this.open(channel);
    if (table === undefined) return;
    const name = LanceChannelIndexes.tableOf(channel);
    const kept = await table.query().toArrow();
    // Its own schema: its vectors' model stays with it (a query's rows carry no metadata, and
    // a table made of them takes theirs).
    const schema = await table.schema();
    for (const [key, value] of schema.metadata) kept.schema.metadata.set(key, value);
    const db = await this.db();
    const rewritten =
      kept.numRows === 0
        ? await db.createEmptyTable(name, schema, { mode: "overwrite" })
        : await db.createTable(name, kept, { mode: "overwrite" });
    if (kept.numRows > 0)
      await rewritten.createIndex("text", { config: fullTextIndex(await lance()) });
    await rewritten.optimize({ cleanupOlderThan: new Date(Date.now() + 1000) });
    table.close();
    this.tables.set(name, rewritten);
  }

  /** How many documents `channel`'s table holds (`channel delete --dry-run`). */
  async count(channel: string): Promise<number> {
    const name = LanceChannelIndexes.tableOf(channel);
    const db = await this.db();
    if (!(await db.tableNames()).includes(name)) return 0;
    return (this.tables.get(name) ?? (await db.openTable(name))).countRows();
  }

  /** Removes `channel`'s table and every file of it (`channel delete`). */
  async drop(channel: string): Promise<void> {
    const name = LanceChannelIndexes.tableOf(channel);
    this.tables.get(name)?.close();
    this.tables.delete(name);
    const db = await this.db();
    if ((await db.tableNames()).includes(name)) await db.dropTable(name);
  }

  /**
   * The best hits of `query` over its channels' tables (every channel's when it names none),
   * merged by score: each table scores by its own statistics, as a sharded engine's shards do.
   * With an embedder, the tables' nearest vectors (by cosine similarity, one space) are merged
   * too, and the two lists fused by reciprocal rank, each as deep as the page's end; a table
   * with another model's vectors is a `SearchError`, one with none adds only its keywords.
   */
  async search(query: SearchQuery): Promise<SearchHit[]> {
    const { limit, offset } = checkQuery(query);
    const keyword = await this.each(query, (index, asked) => pagesOf(index, asked, offset + limit));
    const { embedder } = this.options;
    if (embedder === undefined) return keyword.slice(offset, offset + limit);
    // The query is embedded once, whatever the number of tables and pages.
    const vectors = new Map<string, Promise<number[][]>>();
    const once: Embedder = {
      model: embedder.model,
      embed: (texts, options) => {
        const key = texts.join("\u0000");
        const known = vectors.get(key) ?? embedder.embed(texts, options);
        vectors.set(key, known);
        return known;
      },
    };
    const semantic = await this.each(query, async (index, asked) => {
      if (index.model === undefined) return [];
      return pagesOf(index, asked, offset + limit, { embedder: once, ranking: "semantic" });
    });
    const depth = offset + limit;
    return reciprocalRankFusion(
      [keyword.slice(0, depth), semantic.slice(0, depth)],
      (hit) => hit.id,
    )
      .slice(offset, offset + limit)
      .map(({ item, score }) => ({ ...item, score }));
  }

  /** The hits `find` gives in each of the query's tables, merged by score, best first. */
  private async each(
    query: SearchQuery,
    find: (index: LanceSearchIndex, query: SearchQuery) => Promise<SearchHit[]>,
  ): Promise<SearchHit[]> {
    const horizon = this.horizon();
    if (horizon !== undefined)
      query = { ...query, since: Math.max(query.since ?? horizon, horizon) };
    const db = await this.db();
    const names = await this.tableNames(db);
    const asked =
      query.channels === undefined || query.channels.length === 0
        ? names.filter((n) => n.startsWith(TABLE_PREFIX))
        : query.channels
            .map((c) => LanceChannelIndexes.tableOf(c))
            .filter((n) => names.includes(n));
    const hits: SearchHit[] = [];
    for (let at = 0; at < asked.length; at += SEARCH_CONCURRENCY) {
      const found = await Promise.all(
        asked.slice(at, at + SEARCH_CONCURRENCY).map(async (name) => {
          const table = this.tables.get(name) ?? (await db.openTable(name));
          this.tables.set(name, table);
          return find(await LanceSearchIndex.ofTable(table), query);
        }),
      );
      hits.push(...found.flat());
    }
    return hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  private listed: { at: number; names: Promise<string[]> } | undefined;

  /** The database's tables, listed again once `readConsistencySeconds` passed. */
  private tableNames(db: lancedb.Connection): Promise<string[]> {
    const staleMs = (this.options.readConsistencySeconds ?? 0) * 1000;
    const now = this.now();
    if (this.listed === undefined || now - this.listed.at >= staleMs || staleMs === 0) {
      const names = db.tableNames();
      this.listed = { at: now, names };
      names.catch(() => {
        this.listed = undefined;
      });
    }
    return this.listed.names;
  }

  close(): void {
    for (const table of this.tables.values()) table.close();
    this.tables.clear();
  }
}

/** The first `wanted` hits of `query` in `index`, a page of at most {@link MAX_HITS} at a time. */
async function pagesOf(
  index: LanceSearchIndex,
  query: SearchQuery,
  wanted: number,
  options?: Parameters<LanceSearchIndex["search"]>[1],
) {
  const hits: SearchHit[] = [];
  while (hits.length < wanted) {
    const limit = Math.min(MAX_HITS, wanted - hits.length);
    const page = await index.search({ ...query, limit, offset: hits.length }, options);
    hits.push(...page);
    if (page.length < limit) break;
  }
  return hits;
}
