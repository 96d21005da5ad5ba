/**
 * Hybrid search on a scripted OpenAI-compatible embeddings server (the bench's hashing model,
 * "gpu" read as "graphics"): the vector ranking finds what the words miss and keeps what they
 * find; the vectors are cached in the index and asked again only for new texts; a failing model
 * leaves the old index; another model than the index's is named.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OpenAIEmbedder } from "convoseg/extraction/llm";
import { type SearchDocument, SearchError } from "convoseg/search";
import { LanceSearchIndex } from "convoseg/search/lancedb";
import type { Embedder } from "convoseg/topics";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { hashingEmbedding } from "../../../bench/search/embed-server.js";
import {
  closedAfterEach,
  type RecordedRequest,
  startEmbeddingsServer,
} from "../../support/llm-servers.js";
import { doc } from "./fixtures.js";

const embeddings = closedAfterEach(startEmbeddingsServer);

/** The hashing model, "gpu" a synonym of "graphics". */
const hashing = (request: RecordedRequest) => {
  const { input } = request.body as { input: string[] };
  return {
    body: {
      data: input.map((text, index) => ({
        index,
        embedding: hashingEmbedding(text.replace(/\bgpu\b/gi, "graphics")),
      })),
    },
  };
};

/** The texts the server was asked to embed. */
const asked = (requests: RecordedRequest[]) =>
  requests.flatMap((r) => (r.body as { input: string[] }).input);

const embedderAt = (url: string, model = "hashing") =>
  new OpenAIEmbedder({
    model,
    client: new OpenAI({ baseURL: `${url}/v1`, apiKey: "test", maxRetries: 0 }),
  });

const DOCS: SearchDocument[] = [
  doc({ id: "m1", text: "how do I install the nvidia drivers on hardy?" }),
  doc({ id: "m2", text: "grub: error: unknown filesystem (hd0)" }),
  doc({ id: "m3", text: "my graphics card shows a black screen after boot" }),
  doc({
    id: "q1",
    kind: "question",
    title: "how to install nvidia drivers",
    text: "how to install nvidia drivers\nwith the restricted drivers manager",
  }),
];

const tempIndex = () => join(mkdtempSync(join(tmpdir(), "convoseg-hybrid-")), "index");

async function opened(dir: string): Promise<LanceSearchIndex> {
  const index = await LanceSearchIndex.open(dir);
  if (index === undefined) throw new Error(`no index in ${dir}`);
  return index;
}

describe("hybrid search", () => {
  it("finds what the words miss, keeps what they find, filtered and paged alike", async () => {
    const server = await embeddings(hashing);
    const embedder = embedderAt(server.url);
    const dir = tempIndex();
    const built = await LanceSearchIndex.build(dir, DOCS, { embedder, batch: 2, concurrency: 2 });
    expect(built).toEqual({ documents: 4, model: "hashing", embedded: 4, cached: 0 });
    // Two texts a call, the question's title once (its words start with it).
    expect(server.requests.map((r) => (r.body as { input: string[] }).input.length)).toEqual([
      2, 2,
    ]);
    expect(asked(server.requests)).toContain(DOCS[3]?.text);
    const index = await opened(dir);
    try {
      expect(index.vectors).toEqual({ model: "hashing", dimensions: 256 });
      const keyword = await index.search({ text: "gpu nvidia" });
      expect(keyword.map((h) => h.id).sort()).toEqual(["m1", "q1"]);
      const hybrid = await index.search({ text: "gpu nvidia" }, { embedder });
      expect(new Set(hybrid.slice(0, 3).map((h) => h.id))).toEqual(new Set(["m1", "q1", "m3"]));
      expect(hybrid[2]?.id).toBe("m3");
      // Fused scores, best first; a semantic hit's snippet marks nothing it does not hold.
      expect(hybrid[0]?.score).toBeGreaterThan(1 / 61);
      expect(hybrid[2]?.marks).toEqual([]);
      expect(hybrid.every((h, i) => i === 0 || (hybrid[i - 1]?.score ?? 0) >= h.score)).toBe(true);
      const messages = await index.search({ text: "gpu nvidia", kinds: ["message"] }, { embedder });
      expect(messages.map((h) => h.id)).not.toContain("q1");
      expect(messages.slice(0, 2).map((h) => h.id)).toEqual(["m1", "m3"]);
      const [second] = await index.search(
        { text: "gpu nvidia", limit: 1, offset: 1 },
        { embedder },
      );
      expect(second?.id).toBe(hybrid[1]?.id);
      // By meaning alone: the nearest first, scored by cosine similarity, paged and filtered.
      const semantic = await index.search(
        { text: "gpu nvidia", limit: 3 },
        { embedder, ranking: "semantic" },
      );
      expect(semantic.map((h) => h.id)).toEqual(["m1", "m3", "q1"]);
      expect(semantic[0]?.score).toBeCloseTo(1 / Math.sqrt(2) / 2, 5);
      const [third] = await index.search(
        { text: "gpu nvidia", limit: 1, offset: 2, kinds: ["message"] },
        { embedder, ranking: "semantic" },
      );
      expect(third?.id).toBe("m2");
    } finally {
      index.close();
    }
  });

  it("gives a large index's vectors an index of their own, and still finds the nearest first, filtered", async () => {
    const server = await embeddings(hashing);
    const embedder = embedderAt(server.url);
    const filler = Array.from({ length: 400 }, (_, i) =>
      doc({
        id: `f${i}`,
        text: `backup ${i} of the ${["home", "mail", "web", "db"][i % 4]} server`,
      }),
    );
    const indexFiles = (dir: string) =>
      readdirSync(dir, { recursive: true, withFileTypes: true }).filter(
        (e) => e.isDirectory() && e.parentPath.endsWith("_indices"),
      ).length;
    const scanned = tempIndex();
    await LanceSearchIndex.build(scanned, [...DOCS, ...filler], { embedder });
    const indexed = tempIndex();
    await LanceSearchIndex.build(indexed, [...DOCS, ...filler], { embedder, vectorIndexRows: 256 });
    // The words' index in both; the vectors' only past the bound.
    expect(indexFiles(scanned)).toBe(1);
    expect(indexFiles(indexed)).toBe(2);
    // The index's approximate nearest, re-ranked by the full vectors, are the scan's exact ones.
    const [exact, approximate] = await Promise.all([opened(scanned), opened(indexed)]);
    try {
      for (const text of ["gpu nvidia", "grub filesystem", "mail server backup", "black screen"]) {
        const query = { text, limit: 3, kinds: ["message" as const] };
        // Hits that share nothing with the query tie at 0, in any order: compared by score.
        const nearest = (index: LanceSearchIndex) =>
          index
            .search(query, { embedder, ranking: "semantic" })
            .then((hits) => hits.map((h) => (h.score > 1e-6 ? h.id : Number(h.score.toFixed(6)))));
        expect(await nearest(approximate), text).toEqual(await nearest(exact));
      }
    } finally {
      exact.close();
      approximate.close();
    }
  });

  it("keeps LanceDB's native warnings off a command's stderr unless a person asks for them", () => {
    // Training the vectors' index on few, alike vectors warns of empty clusters: no fault.
    const child = `
      import { mkdtempSync } from "node:fs";
      import { tmpdir } from "node:os";
      import { join } from "node:path";
      import { LanceSearchIndex } from "convoseg/search/lancedb";
      const docs = Array.from({ length: 300 }, (_, i) => ({ id: "m" + i, kind: "message",
        channel: "c", ts: i, title: "", text: "message " + i, author: "a", authorId: "",
        status: "", segment: "", evidence: ["m" + i], permalink: "" }));
      const embedder = { model: "alike", embed: async (texts) =>
        texts.map((_, i) => Array.from({ length: 32 }, (_, d) => (d === i % 3 ? 1 : 0))) };
      const dir = join(mkdtempSync(join(tmpdir(), "convoseg-quiet-")), "index");
      await LanceSearchIndex.build(dir, docs, { embedder, vectorIndexRows: 256 });
      console.log("built");
    `;
    const run = (env: NodeJS.ProcessEnv) =>
      spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", child], {
        cwd: process.cwd(),
        env,
        encoding: "utf8",
      });
    const { LANCEDB_LOG: _, ...unset } = process.env;
    const quiet = run(unset);
    expect(quiet.stdout.trim()).toBe("built");
    expect(quiet.stderr).not.toMatch(/WARN/);
    const asked = run({ ...unset, LANCEDB_LOG: "warn" });
    expect(asked.stdout.trim()).toBe("built");
    expect(asked.stderr).toMatch(/WARN\s+lance_index::vector::kmeans/);
  });

  it("names both models when the query's is not the index's, and a query vector of another length", async () => {
    const server = await embeddings(hashing);
    const dir = tempIndex();
    await LanceSearchIndex.build(dir, DOCS, { embedder: embedderAt(server.url, "hashing") });
    const index = await opened(dir);
    try {
      const mismatch = await index
        .search({ text: "nvidia" }, { embedder: embedderAt(server.url, "other") })
        .catch((e: unknown) => e);
      expect(mismatch).toBeInstanceOf(SearchError);
      expect((mismatch as SearchError).code).toBe("SEARCH_MODEL_MISMATCH");
      expect((mismatch as SearchError).message).toMatch(/hashing.*other/);
      const short: Embedder = { model: "hashing", embed: async (texts) => texts.map(() => [1, 0]) };
      await expect(index.search({ text: "nvidia" }, { embedder: short })).rejects.toThrow(
        "search: hashing gave the query a vector of 2 numbers, the index's have 256",
      );
      const failing: Embedder = {
        model: "hashing",
        embed: async () => {
          throw new Error("down");
        },
      };
      await expect(index.search({ text: "nvidia" }, { embedder: failing })).rejects.toThrow(
        "search: embedding the query with hashing failed: down",
      );
      // A bad query is named before any model is asked.
      await expect(index.search({ text: " " }, { embedder: failing })).rejects.toThrow(
        "the query is empty",
      );
    } finally {
      index.close();
    }
  });

  it("searches by keyword an index without vectors, with or without an embedder", async () => {
    const server = await embeddings(hashing);
    const dir = tempIndex();
    const built = await LanceSearchIndex.build(dir, DOCS);
    expect(built).toEqual({ documents: 4, embedded: 0, cached: 0 });
    const index = await opened(dir);
    try {
      expect(index.vectors).toBeUndefined();
      const hits = await index.search({ text: "gpu nvidia" }, { embedder: embedderAt(server.url) });
      expect(hits.map((h) => h.id).sort()).toEqual(["m1", "q1"]);
      expect(server.requests).toEqual([]);
    } finally {
      index.close();
    }
    // An empty index has no vectors to search, with an embedder or without.
    const empty = tempIndex();
    await LanceSearchIndex.build(empty, [], { embedder: embedderAt(server.url) });
    const none = await opened(empty);
    try {
      expect(none.vectors).toBeUndefined();
      expect(await none.search({ text: "nvidia" }, { embedder: embedderAt(server.url) })).toEqual(
        [],
      );
    } finally {
      none.close();
    }
  });

  it("embeds only texts its cache lacks, keeps the cache through a keyword build, and starts anew for another model", async () => {
    const server = await embeddings(hashing);
    const embedder = embedderAt(server.url);
    const dir = tempIndex();
    // An index built without embeddings has no cache: everything is embedded.
    await LanceSearchIndex.build(dir, DOCS);
    expect(await LanceSearchIndex.build(dir, DOCS, { embedder })).toMatchObject({
      embedded: 4,
      cached: 0,
    });
    expect(asked(server.requests)).toHaveLength(4);
    const again = await LanceSearchIndex.build(dir, DOCS, { embedder });
    expect(again).toMatchObject({ embedded: 0, cached: 4 });
    expect(asked(server.requests)).toHaveLength(4);
    const added = doc({ id: "m4", text: "wifi drops every minute" });
    expect(await LanceSearchIndex.build(dir, [...DOCS, added], { embedder })).toMatchObject({
      embedded: 1,
      cached: 4,
    });
    expect(asked(server.requests).at(-1)).toBe(added.text);
    // A build without an embedder keeps the vectors of the documents it still has, no others.
    await LanceSearchIndex.build(dir, DOCS.slice(1));
    expect(await LanceSearchIndex.build(dir, [...DOCS, added], { embedder })).toMatchObject({
      embedded: 2,
      cached: 3,
    });
    const other = await LanceSearchIndex.build(dir, DOCS, {
      embedder: embedderAt(server.url, "v2"),
    });
    expect(other).toMatchObject({ model: "v2", embedded: 4, cached: 0 });
    expect(await LanceSearchIndex.build(dir, DOCS, { embedder })).toMatchObject({
      embedded: 4,
      cached: 0,
    });
  });

  it("fails a build cleanly when the model fails or too much is to be embedded, leaving the old index", async () => {
    const good = await embeddings(hashing);
    const parent = mkdtempSync(join(tmpdir(), "convoseg-hybrid-"));
    const dir = join(parent, "index");
    await LanceSearchIndex.build(dir, DOCS.slice(0, 2), { embedder: embedderAt(good.url) });
    const bad = await embeddings((_, i) =>
      i === 0 ? hashing({ body: { input: ["x"] } } as RecordedRequest) : { status: 400, body: {} },
    );
    const more = [...DOCS, doc({ id: "m5", text: "sound stopped after the upgrade" })];
    const failed = await LanceSearchIndex.build(dir, more, {
      embedder: embedderAt(bad.url),
      batch: 1,
      concurrency: 1,
    }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(SearchError);
    expect((failed as SearchError).code).toBe("SEARCH_EMBEDDING_FAILED");
    expect((failed as SearchError).message).toMatch(
      /^search: embedding 3 texts of 5 documents with hashing failed: embeddings \(hashing at .*\): status 400/,
    );
    const tooMany = await LanceSearchIndex.build(dir, more, {
      embedder: embedderAt(good.url),
      maxEmbedded: 2,
    }).catch((e: unknown) => e);
    expect((tooMany as SearchError).code).toBe("SEARCH_TOO_MANY_TO_EMBED");
    expect((tooMany as SearchError).message).toContain(
      "search: 3 texts of 5 documents to embed with hashing, more than the 2 one build embeds (maxEmbedded)",
    );
    const uneven: Embedder = {
      model: "hashing",
      embed: async (texts) => texts.map((_, i) => (i === 0 ? [1, 0] : [1, 0, 0])),
    };
    await expect(LanceSearchIndex.build(dir, more, { embedder: uneven })).rejects.toThrow(
      "search: hashing's vectors of 5 documents are not all of one length",
    );
    expect(readdirSync(parent)).toEqual(["index"]);
    const index = await opened(dir);
    try {
      expect((await index.search({ text: "grub" })).map((h) => h.id)).toEqual(["m2"]);
      expect(await index.search({ text: "sound" })).toEqual([]);
    } finally {
      index.close();
    }
    expect(existsSync(join(dir, "vectors.lance"))).toBe(true);
  });
});
