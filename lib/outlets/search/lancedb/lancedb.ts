/**
 * The search index on LanceDB (embedded, on disk; docs/search.md says why): one table of
 * {@link SearchDocument}s with a full-text index (BM25, English stemming) on their words. The
 * query's words are one match query, never query syntax: chat text and a person's query are
 * words to look for, not operators.
 */
import { randomBytes } from "node:crypto";
import { existsSync, renameSync, rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import * as lancedb from "@lancedb/lancedb";
import { Field, Float64, Schema, Utf8 } from "apache-arrow";
import type { SearchDocument, SearchHit, SearchKind } from "../documents.js";
import { SearchError } from "../errors.js";
import { checkQuery, type SearchQuery, whereClause } from "../query.js";
import { snippet } from "../snippet/index.js";

const TABLE = "documents";

/**
 * Lance sizes its compute pool by the cores; with 2 (a small machine, a Lambda of under 3.5 GB)
 * building a full-text index of a few hundred thousand documents waits on itself forever
 * (measured here: 228k messages and conversations). Four threads finish it; a person's own
 * setting stands.
 */
const MIN_LANCE_THREADS = 4;
process.env.LANCE_CPU_THREADS ??= String(Math.max(MIN_LANCE_THREADS, availableParallelism()));

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

const SCHEMA = new Schema([
  ...STRING_COLUMNS.map((name) => new Field(name, new Utf8(), false)),
  new Field("ts", new Float64(), false),
]);

type Row = Record<(typeof STRING_COLUMNS)[number], string> & { ts: number };

const rowOf = (d: SearchDocument): Row => ({ ...d, evidence: JSON.stringify(d.evidence) });

export class LanceSearchIndex {
  private constructor(private readonly table: lancedb.Table) {}

  /**
   * Writes `documents` as the index in `dir`, replacing what was there: built beside it and
   * moved in, so that a failed build leaves the old one, and the old one's files are removed,
   * not kept as an older version.
   */
  static async build(dir: string, documents: readonly SearchDocument[]): Promise<void> {
    const building = `${dir}.building-${randomBytes(4).toString("hex")}`;
    try {
      const db = await lancedb.connect(building);
      const BATCH = 10_000;
      // Made with its first rows: adding to an empty table logs a warning of its own.
      const table =
        documents.length === 0
          ? await db.createEmptyTable(TABLE, SCHEMA)
          : await db.createTable(TABLE, documents.slice(0, BATCH).map(rowOf), { schema: SCHEMA });
      for (let at = BATCH; at < documents.length; at += BATCH) {
        await table.add(documents.slice(at, at + BATCH).map(rowOf));
      }
      await table.createIndex("text", {
        config: lancedb.Index.fts({
          withPosition: false,
          stem: true,
          language: "English",
          removeStopWords: true,
          lowercase: true,
        }),
      });
      table.close();
      rmSync(dir, { recursive: true, force: true });
      renameSync(building, dir);
    } finally {
      rmSync(building, { recursive: true, force: true });
    }
  }

  /** The index in `dir`, or undefined when none was built there. */
  static async open(dir: string): Promise<LanceSearchIndex | undefined> {
    if (!existsSync(dir)) return undefined;
    const db = await lancedb.connect(dir);
    if (!(await db.tableNames()).includes(TABLE)) return undefined;
    return new LanceSearchIndex(await db.openTable(TABLE));
  }

  /** The best hits for `query`, best first; a bad query is a `SearchError` naming what is wrong. */
  async search(query: SearchQuery): Promise<SearchHit[]> {
    const { text, limit, offset } = checkQuery(query);
    let search = this.table
      .search(new lancedb.MatchQuery(text, "text"), "fts")
      .limit(limit)
      .offset(offset);
    const where = whereClause(query);
    if (where !== undefined) search = search.where(where);
    let rows: Record<string, unknown>[];
    try {
      rows = await search.toArray();
    } catch (error) {
      throw new SearchError(
        "SEARCH_FAILED",
        `search: the index could not be read (${(error as Error).message})`,
        { cause: error },
      );
    }
    return rows.map((row) => {
      const { text: words, evidence, _score, ...rest } = row as Row & { _score?: number };
      const { text: shown, marks } = snippet(words, text);
      return {
        ...rest,
        kind: rest.kind as SearchKind,
        evidence: JSON.parse(evidence) as string[],
        score: typeof _score === "number" ? _score : 0,
        snippet: shown,
        marks,
      };
    });
  }

  close(): void {
    this.table.close();
  }
}
