/**
 * `npm run bench:search`: the local search index (LanceDB, `lib/outlets/search`) on the IRC
 * corpus: how long building it takes and how much disk it takes per 100,000 messages, how long a
 * query takes (p50, p99) with and without filters, each query a word pair drawn from the messages
 * themselves (fixed seed), and how well it finds an annotated answer to an annotated question
 * (recall@5, MRR) beside plain BM25 over single messages, measured in the same run, and
 * semantic and hybrid ranking with an embedding model (a scripted hashing one unless told).
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiHandler, memoryApiSources, type SearchSource } from "convoseg/api";
import { OpenAIEmbedder } from "convoseg/extraction/llm";
import {
  type SearchDocument,
  type SearchHit,
  type SearchQuery,
  searchDocuments,
} from "convoseg/search";
import { LanceChannelIndexes, LanceSearchIndex } from "convoseg/search/lancedb";
import type { Embedder } from "convoseg/topics";
import { parseEmbedder } from "../cli/topics/embedding-options.js";
import { benchArgs, usageError } from "./args.js";
import { type HashingServer, startHashingServer } from "./search/embed-server.js";
import { type LabelledQuestion, readCorpus } from "./search/labelled.js";

const USAGE = `Usage: npm run bench:search -- [--data DIR] [--queries N] [--copies N] [--semantic] [--embeddings M [--embeddings-url U]] [--json]

Builds the search index of the IRC files in DIR (each file a channel; its people's lines linked
into conversations and cut as \`run\` cuts them), times queries on it (directly, through the read
API's GET /search handler, and on a table per channel as the deployed index keeps them), and
measures its quality.

Quality: for every annotated question (a person's line with a question mark, ids from 1000) that
another person answered by the corpus's reply annotation, the question's words (its leading
"nick:" left out) are the query, the question's own message is left out of the hits, and a hit
is right when it holds an annotated answer: that message, or a conversation with it. Reported
as recall@5 (a right hit among the first 5) and MRR (1/rank of the first right hit in the first
10, else 0) for the index (messages and conversations) and for the baseline, BM25 over single
messages on the same engine; and, with --semantic or --embeddings, the index built again with
every document's embedding, for semantic ranking (the nearest documents by cosine distance) and hybrid (keyword and semantic
fused by reciprocal rank). Without --embeddings the model is a scripted one served on
127.0.0.1: feature hashing of lowercased, crudely stemmed words into 256 dimensions, which
knows words, not meanings: a floor, not a measure of a real model.

Options:
  --data DIR     the IRC folder (default ../shared/data/irc; irc-train adds 155 files more)
  --queries N    queries timed per kind of query (default 200)
  --copies N     also time queries on an index of the messages N times over (default 0: not)
  --semantic     also measure semantic and hybrid ranking (the scripted model unless --embeddings;
                 about 3 minutes more on the default data, its vectors indexed past 50,000 documents)
  --embeddings M the model for semantic and hybrid (implies --semantic): bedrock, bedrock:MODEL or openai:MODEL
                 (key from $OPENAI_API_KEY; default the scripted hashing model)
  --embeddings-url U  the OpenAI-compatible API's base URL, /v1 included (with openai:MODEL)
  --json         one JSON object instead of the table
  -h, --help     this help`;

const values = benchArgs(USAGE, {
  data: { type: "string", default: "../shared/data/irc" },
  queries: { type: "string", default: "200" },
  copies: { type: "string", default: "0" },
  semantic: { type: "boolean", default: false },
  embeddings: { type: "string" },
  "embeddings-url": { type: "string" },
  json: { type: "boolean", default: false },
});
const queries = Number(values.queries);
if (!Number.isInteger(queries) || queries < 1)
  usageError(USAGE, "--queries must be a whole number above 0");

let names: string[];
try {
  names = readdirSync(values.data).filter((n) => n.endsWith(".jsonl"));
} catch (error) {
  usageError(USAGE, `--data ${values.data}: cannot read it (${(error as Error).message})`);
}
if (names.length === 0) usageError(USAGE, `--data ${values.data} holds no .jsonl files`);

const copies = Number(values.copies);
if (!Number.isInteger(copies) || copies < 0)
  usageError(USAGE, "--copies must be a whole number, 0 or more");

/** The model `--embeddings` names, or the scripted hashing model's server started here. */
/** The model named by --embeddings, checked before anything is built; undefined: none named. */
const named = (() => {
  try {
    return parseEmbedder(values);
  } catch (error) {
    return usageError(USAGE, (error as Error).message);
  }
})();

/** The named model, else a scripted hashing one served on 127.0.0.1 for the run. */
async function embedderOf(): Promise<{
  embedder: Embedder;
  label: string;
  server?: HashingServer;
}> {
  if (named !== undefined) return { embedder: named, label: named.model };
  const server = await startHashingServer();
  const embedder = new OpenAIEmbedder({ model: "hashing", baseURL: server.url, apiKey: "none" });
  return { embedder, label: "scripted hashing embedder", server };
}

const corpus = readCorpus(values.data, names.sort());
const { messages } = corpus;
/** A deterministic generator (mulberry32), so that every run asks the same queries. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const next = random(42);
const words = (text: string) => text.split(/[^\p{L}]+/u).filter((w) => w.length > 3);
const asked: string[] = [];
while (asked.length < queries) {
  const pool = words(messages[Math.floor(next() * messages.length)]?.text ?? "");
  if (pool.length >= 2) asked.push(`${pool[0]} ${pool[pool.length - 1]}`);
}

const root = mkdtempSync(join(tmpdir(), "convoseg-bench-search-"));

/** Builds `documents` as an index in `root`: how long it took, its bytes, the index open. */
async function built(name: string, documents: readonly SearchDocument[], embedder?: Embedder) {
  const dir = join(root, name);
  const started = performance.now();
  await LanceSearchIndex.build(dir, documents, { embedder });
  const ms = performance.now() - started;
  const bytes = (
    readdirSync(dir, { recursive: true, withFileTypes: true }) as import("node:fs").Dirent[]
  )
    .filter((e) => e.isFile())
    .reduce((sum, e) => sum + statSync(join(e.parentPath, e.name)).size, 0);
  const index = await LanceSearchIndex.open(dir);
  if (index === undefined) throw new Error(`no index built in ${dir}`);
  return { ms, bytes, index };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
/** What answers a query: an index, or the read API's handler over one. */
type Searcher = Pick<SearchSource, "search">;

async function timed(
  index: Searcher,
  filters: Omit<SearchQuery, "text">,
): Promise<{ p50: number; p99: number; hits: number }> {
  const times: number[] = [];
  let hits = 0;
  // One untimed query: the index's files read once, as a long-lived reader has them.
  await index.search({ text: asked[0] as string, ...filters });
  for (const text of asked) {
    const t0 = performance.now();
    hits += (await index.search({ text, ...filters })).length;
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), hits: hits / asked.length };
}

const membersOf = new Map(
  corpus.results.map((r) => [`${r.channel}\u0000${r.segmentId}`, r.messageIds ?? []]),
);
/** Whether `hit` holds an annotated answer to `question`: that message, or a conversation with it. */
function right(hit: SearchHit, question: LabelledQuestion): boolean {
  if (hit.channel !== question.channel) return false;
  if (hit.kind === "message") return question.answers.has(hit.evidence[0] as string);
  if (hit.kind !== "conversation") return false;
  return (membersOf.get(`${hit.channel}\u0000${hit.segment}`) ?? []).some((id) =>
    question.answers.has(id),
  );
}
async function quality(
  index: LanceSearchIndex,
  ranking?: { embedder: Embedder; ranking: "hybrid" | "semantic" },
): Promise<{ recallAt5: number; mrr: number }> {
  let found = 0;
  let reciprocal = 0;
  for (const question of corpus.questions) {
    const own = (hit: SearchHit) =>
      hit.kind === "message" && hit.channel === question.channel && hit.evidence[0] === question.id;
    const hits = (await index.search({ text: question.query, limit: 11 }, ranking))
      .filter((hit) => !own(hit))
      .slice(0, 10);
    const rank = hits.findIndex((hit) => right(hit, question));
    if (rank >= 0 && rank < 5) found += 1;
    if (rank >= 0) reciprocal += 1 / (rank + 1);
  }
  const n = Math.max(1, corpus.questions.length);
  return { recallAt5: found / n, mrr: reciprocal / n };
}

const messageDocuments = searchDocuments({ messages, results: [], topics: [] });
const documents = searchDocuments({ messages, results: corpus.results, topics: [] });
const full = await built("index", documents);
const plain = await timed(full.index, {});
const perChannel = new Map<string, number>();
for (const m of messages) perChannel.set(m.channel, (perChannel.get(m.channel) ?? 0) + 1);
const busiest = [...perChannel].sort((a, b) => b[1] - a[1])[0]?.[0] ?? "";
const filtered = await timed(full.index, {
  channels: [busiest],
  kinds: ["message"],
  since: 0,
});
/** `GET /search?q=…` of the read API's handler (as `serve` and the deployed function run it). */
function throughApi(index: Searcher): Searcher {
  const handle = apiHandler(memoryApiSources({ search: index }));
  return {
    async search(query) {
      const response = await handle({
        method: "GET",
        rawPath: "/search",
        rawQuery: new URLSearchParams({ q: query.text, limit: "20" }).toString(),
        headers: {},
      });
      if (response.status !== 200) throw new Error(`GET /search answered ${response.status}`);
      return (JSON.parse(response.body) as { hits: SearchHit[] }).hits;
    },
  };
}
const api = await timed(throughApi(full.index), {});
// The deployed index's layout: a table per channel, on disk here (on S3 deployed).
const byChannel = new LanceChannelIndexes(join(root, "channels"));
const channelsBuilt = performance.now();
for (const channel of perChannel.keys())
  await byChannel.replaceSegment(
    channel,
    "",
    documents.filter((d) => d.channel === channel),
  );
const channelsBuildMs = performance.now() - channelsBuilt;
const deployed = await timed(throughApi(byChannel), {});
byChannel.close();
const indexQuality = await quality(full.index);
full.index.close();
const baseline = await built("baseline", messageDocuments);
const baselineQuality = await quality(baseline.index);
baseline.index.close();
/** Semantic and hybrid quality, when asked: an index built again with every embedding. */
async function semanticRun() {
  const model = await embedderOf();
  try {
    const embedded = await built("embedded", documents, model.embedder);
    const semantic = await quality(embedded.index, {
      embedder: model.embedder,
      ranking: "semantic",
    });
    const hybrid = await quality(embedded.index, { embedder: model.embedder, ranking: "hybrid" });
    embedded.index.close();
    return { model: model.label, embeddedBuildMs: Math.round(embedded.ms), semantic, hybrid };
  } finally {
    await model.server?.close();
  }
}
const semantic =
  values.semantic || values.embeddings !== undefined ? await semanticRun() : undefined;

let scaled:
  | { documents: number; buildMs: number; plain: Awaited<ReturnType<typeof timed>> }
  | undefined;
if (copies > 0) {
  const many = Array.from({ length: copies }, (_, copy) =>
    documents.map((d) => ({ ...d, id: `${d.id}:${copy}` })),
  ).flat();
  const big = await built("copies", many);
  scaled = { documents: many.length, buildMs: big.ms, plain: await timed(big.index, {}) };
  big.index.close();
}
rmSync(root, { recursive: true, force: true });

const per100k = (n: number) => (n * 100_000) / messages.length;
const result = {
  files: names.length,
  messages: messages.length,
  documents: documents.length,
  buildMs: Math.round(full.ms),
  buildMsPer100k: Math.round(per100k(full.ms)),
  bytesPer100k: Math.round(per100k(full.bytes)),
  queries: asked.length,
  plain,
  filtered,
  api,
  deployed: { channels: perChannel.size, buildMs: Math.round(channelsBuildMs), ...deployed },
  quality: {
    questions: corpus.questions.length,
    index: indexQuality,
    baseline: baselineQuality,
    ...semantic,
    recallRatio: indexQuality.recallAt5 / Math.max(1e-9, baselineQuality.recallAt5),
  },
  scaled,
};
if (values.json) console.log(JSON.stringify(result));
else {
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  const pct = (n: number) => `${(100 * n).toFixed(1)}%`;
  console.log(
    `search index of ${names.length} IRC files: ${messages.length.toLocaleString("en-US")} messages, ${(documents.length - messages.length).toLocaleString("en-US")} conversations`,
  );
  console.log(
    `  build: ${(full.ms / 1000).toFixed(1)} s (${(per100k(full.ms) / 1000).toFixed(1)} s per 100k messages)`,
  );
  console.log(
    `  size: ${(full.bytes / 1e6).toFixed(1)} MB (${(per100k(full.bytes) / 1e6).toFixed(1)} MB per 100k messages)`,
  );
  console.log(`  ${asked.length} two-word queries, 20 hits at most:`);
  console.log(
    `    any channel, any kind: p50 ${ms(plain.p50)}, p99 ${ms(plain.p99)}, ${plain.hits.toFixed(1)} hits mean`,
  );
  console.log(
    `    one channel, messages, since: p50 ${ms(filtered.p50)}, p99 ${ms(filtered.p99)}, ${filtered.hits.toFixed(1)} hits mean`,
  );
  console.log(
    `    GET /search through the read API's handler: p50 ${ms(api.p50)}, p99 ${ms(api.p99)}`,
  );
  console.log(
    `    the same on a table per channel (the deployed layout, ${perChannel.size} tables, written in ${(channelsBuildMs / 1000).toFixed(1)} s): p50 ${ms(deployed.p50)}, p99 ${ms(deployed.p99)}`,
  );
  const q = result.quality;
  console.log(`  quality, ${q.questions} annotated questions answered by another person:`);
  console.log(
    `    messages and conversations (keyword): recall@5 ${pct(q.index.recallAt5)}, MRR ${q.index.mrr.toFixed(3)}`,
  );
  console.log(
    `    baseline, BM25 over single messages:  recall@5 ${pct(q.baseline.recallAt5)}, MRR ${q.baseline.mrr.toFixed(3)}`,
  );
  if (semantic !== undefined) {
    console.log(
      `    semantic (${semantic.model}): recall@5 ${pct(semantic.semantic.recallAt5)}, MRR ${semantic.semantic.mrr.toFixed(3)}`,
    );
    console.log(
      `    hybrid (keyword and semantic, RRF): recall@5 ${pct(semantic.hybrid.recallAt5)}, MRR ${semantic.hybrid.mrr.toFixed(3)}`,
    );
    console.log(
      `    (built again with every document's embedding: ${(semantic.embeddedBuildMs / 1000).toFixed(1)} s)`,
    );
  }
  console.log(`    recall@5 ratio: ${q.recallRatio.toFixed(2)}x the baseline`);
  if (scaled !== undefined)
    console.log(
      `  ${copies} copies, ${scaled.documents.toLocaleString("en-US")} documents: build ${(scaled.buildMs / 1000).toFixed(1)} s, p50 ${ms(scaled.plain.p50)}, p99 ${ms(scaled.plain.p99)}`,
    );
}
