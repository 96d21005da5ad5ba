/**
 * The registry's derived indexes (`storage.index` of `KINDS`), as the conformance test
 * (`./kinds-conformance.ts`) drives them: knowledge cannot import an index's implementation (an
 * outlet), so each is wired here, by name, over a deployment's stores. The map is typed by the
 * registry's names, so an index registered without its harness does not compile, and the
 * conformance test fails on one it cannot find.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@lancedb/lancedb";
import type { Message } from "convoseg/history";
import type { DerivedIndexName } from "convoseg/knowledge";
import { KnowledgeReader } from "convoseg/knowledge/read";
import type { ResultStore, SegmentResult } from "convoseg/knowledge/store";
import type { KnowledgeRedactorOptions } from "convoseg/knowledge/write";
import { SearchIndexer } from "convoseg/search";
import { LanceChannelIndexes } from "convoseg/search/lancedb";

/** A derived index on a deployment's stores, with what the conformance test reads of it. */
export interface DerivedIndex {
  /** Told each result stored, as the consumer's `indexed` hook is. */
  stored(result: SegmentResult): Promise<void>;
  /** The redactor's `onRedacted`. */
  redacted: NonNullable<KnowledgeRedactorOptions["onRedacted"]>;
  /** The erasure's `search`: told, per channel and page, what it erased. */
  erased(channel: string, messageIds: readonly string[], names: readonly string[]): Promise<void>;
  /** `channel delete`'s part of it (`storage.channelDeletion`). */
  deleteChannel(channel: string): Promise<void>;
  /** Every document it holds of `channels`, as stored (found or not). */
  documents(channels: readonly string[]): Promise<Record<string, unknown>[]>;
  /** What a query of `words` finds in `channels`. */
  find(words: string, channels: readonly string[]): Promise<Record<string, unknown>[]>;
  /** Every file it keeps, as text: where a deletion that only marks rows would still be found. */
  bytes(): string;
  close(): void;
}

interface DerivedIndexStores {
  results: ResultStore;
  history: { getMessages(channel: string, ids: readonly string[]): Promise<Message[]> };
  /** The clock its retention is measured by. */
  now: () => number;
  /** How long a document is kept after its time, in ms. */
  retentionMs: number;
}

/** Every file under `dir`, whole. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The search index as deployed: the real `SearchIndexer` over `LanceChannelIndexes` in a directory. */
async function searchIndex(stores: DerivedIndexStores): Promise<DerivedIndex> {
  const dir = mkdtempSync(join(tmpdir(), "convoseg-kinds-search-"));
  const index = new LanceChannelIndexes(join(dir, "index"), {
    now: stores.now,
    retentionMs: stores.retentionMs,
  });
  const reader = new KnowledgeReader({ store: stores.results });
  const indexer = new SearchIndexer({
    index,
    results: stores.results,
    messages: stores.history,
    topics: (channel) => reader.topics(channel),
    corrections: (channel) => stores.results.listCorrections(channel),
  });
  const find = async (text: string, channels: readonly string[]) => {
    const hits = await index.search({ text, channels: [...channels], limit: 100 });
    return hits as unknown as Record<string, unknown>[];
  };
  const db = await connect(join(dir, "index"));
  return {
    stored: (result) => indexer.stored(result),
    redacted: (...args) => indexer.redacted(...args),
    erased: (...args) => indexer.erased(...args),
    deleteChannel: (channel) => index.drop(channel),
    documents: async (channels) => {
      const names = await db.tableNames();
      const rows: Record<string, unknown>[] = [];
      for (const channel of channels) {
        const name = LanceChannelIndexes.tableOf(channel);
        if (!names.includes(name)) continue;
        const table = await db.openTable(name);
        // Without the vector column, where there is one: what is stored of the words.
        for (const row of await table.query().toArray()) {
          const { vector: _, ...words } = row as Record<string, unknown>;
          rows.push(words);
        }
        table.close();
      }
      return rows;
    },
    find,
    bytes: () =>
      filesUnder(dir)
        .map((file) => readFileSync(file).toString("latin1"))
        .join("\n"),
    close: () => {
      index.close();
      db.close();
    },
  };
}

/** Each derived index of the registry, by name. */
export const DERIVED_INDEXES: {
  readonly [I in DerivedIndexName]: (stores: DerivedIndexStores) => Promise<DerivedIndex>;
} = { search: searchIndex };
