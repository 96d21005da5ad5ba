/**
 * `npm run bench:search`: the local search index (LanceDB, `lib/outlets/search`) on the annotated
 * IRC corpus's messages: how long building it takes and how much disk it takes per 100,000
 * messages, and how long a query takes (p50, p99) with and without filters, each query a word
 * pair drawn from the messages themselves (fixed seed).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChatMessage } from "convoseg/messages";
import { searchDocuments } from "convoseg/search";
import { LanceSearchIndex } from "convoseg/search/lancedb";
import { benchArgs, usageError } from "./args.js";

const USAGE = `Usage: npm run bench:search -- [--data DIR] [--queries N] [--json]

Builds the search index of every message of the IRC files in DIR and times queries on it.

Options:
  --data DIR     the IRC folder (default ../shared/data/irc; irc-train adds 155 files more)
  --queries N    queries timed per kind of query (default 200)
  --json         one JSON object instead of the table
  -h, --help     this help`;

const values = benchArgs(USAGE, {
  data: { type: "string", default: "../shared/data/irc" },
  queries: { type: "string", default: "200" },
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

const messages: ChatMessage[] = [];
for (const name of names.sort()) {
  const channel = name.split(".")[0] as string;
  for (const line of readFileSync(join(values.data, name), "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const row = JSON.parse(line) as {
      id: number;
      ts: string;
      user?: string;
      text?: string;
      system?: boolean;
    };
    if (row.system) continue;
    messages.push({
      id: `${name}:${row.id}`,
      ts: Date.parse(row.ts),
      channel,
      user: row.user ?? "",
      text: row.text ?? "",
    });
  }
}

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

const documents = searchDocuments({ messages, results: [], topics: [] });
const root = mkdtempSync(join(tmpdir(), "convoseg-bench-search-"));
const dir = join(root, "index");
const started = performance.now();
await LanceSearchIndex.build(dir, documents);
const buildMs = performance.now() - started;
const bytes = (
  readdirSync(dir, { recursive: true, withFileTypes: true }) as import("node:fs").Dirent[]
)
  .filter((e) => e.isFile())
  .reduce((sum, e) => sum + statSync(join(e.parentPath, e.name)).size, 0);
const index = await LanceSearchIndex.open(dir);
if (index === undefined) throw new Error("no index built");

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
async function timed(filters: object): Promise<{ p50: number; p99: number; hits: number }> {
  const times: number[] = [];
  let hits = 0;
  // One untimed query: the index's files read once, as a long-lived reader has them.
  await index?.search({ text: asked[0] as string, ...filters });
  for (const text of asked) {
    const t0 = performance.now();
    hits += (await index?.search({ text, ...filters }))?.length ?? 0;
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), hits: hits / asked.length };
}
const plain = await timed({});
const filtered = await timed({ channels: ["ubuntu"], kinds: ["message"], since: 0 });
index.close();
rmSync(root, { recursive: true, force: true });

const per100k = (n: number) => (n * 100_000) / documents.length;
const result = {
  files: names.length,
  messages: documents.length,
  buildMs: Math.round(buildMs),
  buildMsPer100k: Math.round(per100k(buildMs)),
  bytesPer100k: Math.round(per100k(bytes)),
  queries: asked.length,
  plain,
  filtered,
};
if (values.json) console.log(JSON.stringify(result));
else {
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  console.log(
    `search index of ${names.length} IRC files, ${documents.length.toLocaleString("en-US")} messages`,
  );
  console.log(
    `  build: ${(buildMs / 1000).toFixed(1)} s (${(per100k(buildMs) / 1000).toFixed(1)} s per 100k messages)`,
  );
  console.log(
    `  size: ${(bytes / 1e6).toFixed(1)} MB (${(per100k(bytes) / 1e6).toFixed(1)} MB per 100k messages)`,
  );
  console.log(`  ${asked.length} two-word queries, 20 hits at most:`);
  console.log(
    `    any channel, any kind: p50 ${ms(plain.p50)}, p99 ${ms(plain.p99)}, ${plain.hits.toFixed(1)} hits mean`,
  );
  console.log(
    `    one channel, messages, since: p50 ${ms(filtered.p50)}, p99 ${ms(filtered.p99)}, ${filtered.hits.toFixed(1)} hits mean`,
  );
}
