/**
 * What the deployed search index (issue 41; docs/search.md, "Deployed: what was verified") relies
 * on LanceDB for: while the one writer commits (adds, deletes, compaction, a rebuilt full-text
 * index), readers on connections of their own, in this process and in others, never fail and
 * never see half a commit: each result is a committed version, and a reader's versions only go
 * forward. LanceDB's public API on a local directory; on S3 the same commits are made by a
 * conditional PUT of the next manifest instead of a rename (docs/search.md says what was tried).
 *
 * Every batch is one `add` of ROWS rows and a checksum row holding ROWS, and a delete removes a
 * whole batch, so a torn read shows as a batch with too few rows or no checksum, and each
 * committed version has a set of batches of its own.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import * as lancedb from "@lancedb/lancedb";
import { afterAll, describe, expect, it } from "vitest";

const TABLE = "docs";
const ROWS = 20;
const BATCHES = 24;
const FIELDS = ["batch", "kind", "n"];

const batchRows = (batch: number) => [
  ...Array.from({ length: ROWS }, (_, i) => ({
    batch,
    kind: "row",
    n: i,
    text: `common words of batch ${batch} row ${i}`,
  })),
  { batch, kind: "sum", n: ROWS, text: `common checksum of batch ${batch}` },
];

/** Per batch: its rows' count and its checksum rows' values (one, ROWS, when whole). */
type Counts = Record<string, [rows: number, sums: number[]]>;

const countsOf = (rows: readonly Record<string, unknown>[]): Counts => {
  const counts: Counts = {};
  for (const { batch, kind, n } of rows) {
    const c = counts[String(batch)] ?? [0, []];
    counts[String(batch)] = c;
    if (kind === "row") c[0] += 1;
    else c[1].push(Number(n));
  }
  return counts;
};

/** The batches a read saw, as a key ("0,1,2"), or what was torn. */
const stateOf = (counts: Counts): string => {
  const batches = Object.keys(counts)
    .map(Number)
    .sort((a, b) => a - b);
  for (const b of batches) {
    const [rows, sums] = counts[String(b)] ?? [0, []];
    if (rows !== ROWS || sums.length !== 1 || sums[0] !== ROWS) {
      return `torn: batch ${b} has ${rows} rows and checksums ${JSON.stringify(sums)}`;
    }
  }
  return batches.join(",");
};

const fts = (table: lancedb.Table) =>
  table
    .search(new lancedb.MatchQuery("common", "text"), "fts")
    .select([...FIELDS, "_score"])
    .limit(100_000)
    .toArray();

/** One read: a scan and a full-text query, each a state of its own. */
const readOnce = async (table: lancedb.Table): Promise<string[]> => [
  stateOf(countsOf(await table.query().select(FIELDS).toArray())),
  stateOf(countsOf(await fts(table))),
];

// The same read in another process: prints one line of counts per read until its stdin ends.
// `checkout` reads on a default connection after `checkoutLatest`; `interval0` on a connection
// with `readConsistencyInterval: 0`.
const CHILD = `
const lancedb = await import("@lancedb/lancedb");
const mode = process.env.READER_MODE;
let stop = false;
process.stdin.on("end", () => { stop = true; });
process.stdin.resume();
const countsOf = (rows) => {
  const counts = {};
  for (const { batch, kind, n } of rows) {
    const c = counts[String(batch)] ?? [0, []];
    counts[String(batch)] = c;
    if (kind === "row") c[0] += 1; else c[1].push(Number(n));
  }
  return counts;
};
const db = await lancedb.connect(process.env.INDEX_DIR, mode === "interval0" ? { readConsistencyInterval: 0 } : {});
const table = await db.openTable(${JSON.stringify(TABLE)});
const fields = ${JSON.stringify(FIELDS)};
while (!stop) {
  try {
    if (mode === "checkout") await table.checkoutLatest();
    const scan = await table.query().select(fields).toArray();
    const fts = await table.search(new lancedb.MatchQuery("common", "text"), "fts").select([...fields, "_score"]).limit(100000).toArray();
    console.log(JSON.stringify({ scan: countsOf(scan), fts: countsOf(fts) }));
  } catch (error) {
    console.log(JSON.stringify({ error: String(error) }));
  }
}
`;

interface ChildReader {
  child: ChildProcess;
  ready: Promise<void>;
  states: string[];
  errors: string[];
  exited: Promise<void>;
}

const startChild = (dir: string, mode: "checkout" | "interval0"): ChildReader => {
  const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD], {
    cwd: process.cwd(),
    env: { ...process.env, INDEX_DIR: dir, READER_MODE: mode, LANCE_CPU_THREADS: "4" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const reader: Omit<ChildReader, "ready" | "exited"> = { child, states: [], errors: [] };
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => {
    child.on("exit", (code) => {
      if (code !== 0) reader.errors.push(`exit ${code}: ${stderr}`);
      resolve();
    });
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.on("exit", () => reject(new Error(`reader ${mode} exited: ${stderr}`)));
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on("line", (line) => {
      const read = JSON.parse(line) as { scan: Counts; fts: Counts } | { error: string };
      if ("error" in read) reader.errors.push(read.error);
      else reader.states.push(stateOf(read.scan), stateOf(read.fts));
      // Ready once it has read: its first read is before the first commit.
      resolve();
    });
  });
  return { ...reader, ready, exited };
};

describe("LanceDB, one writer and concurrent readers", () => {
  const dir = mkdtempSync(join(tmpdir(), "convoseg-lance-concurrency-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("readers see only whole committed versions, in order, and never fail", async () => {
    const writerDb = await lancedb.connect(dir);
    const table = await writerDb.createTable(TABLE, batchRows(0));
    await table.createIndex("text", { config: lancedb.Index.fts() });

    // The committed states in order, and the batches each holds.
    const live = new Set([0]);
    const committed = [stateOf(countsOf(batchRows(0)))];
    const commit = () => committed.push([...live].sort((a, b) => a - b).join(","));

    const children = [startChild(dir, "checkout"), startChild(dir, "interval0")];
    await Promise.all(children.map((c) => c.ready));

    // In this process, each on a connection of its own: `fresh` checks for a newer version on
    // every read, `checkout` asks for the latest before each read, `pinned` asks for nothing.
    const open = async (options?: Partial<lancedb.ConnectionOptions>) =>
      (await lancedb.connect(dir, options)).openTable(TABLE);
    const readers = {
      fresh: await open({ readConsistencyInterval: 0 }),
      checkout: await open(),
      pinned: await open(),
    };
    const seen: Record<keyof typeof readers, string[]> = { fresh: [], checkout: [], pinned: [] };
    const errors: string[] = [];
    let writing = true;
    const loops = (Object.keys(readers) as (keyof typeof readers)[]).map(async (name) => {
      const reader = readers[name];
      do {
        try {
          if (name === "checkout") await reader.checkoutLatest();
          seen[name].push(...(await readOnce(reader)));
        } catch (error) {
          errors.push(`${name}: ${String(error)}`);
        }
      } while (writing);
      // One more read after the last commit.
      if (name === "checkout") await reader.checkoutLatest();
      seen[name].push(...(await readOnce(reader)));
    });

    try {
      for (let b = 1; b <= BATCHES; b++) {
        await table.add(batchRows(b));
        live.add(b);
        commit();
        if (b % 4 === 0) {
          await table.delete(`batch = ${b - 3}`);
          live.delete(b - 3);
          commit();
        }
        // Compaction with the default cleanup, which keeps 7 days of versions for readers.
        if (b % 6 === 0) await table.optimize();
        if (b % 8 === 0) {
          await table.createIndex("text", { config: lancedb.Index.fts(), replace: true });
        }
      }
    } finally {
      writing = false;
      await Promise.all(loops);
    }
    const last = committed.at(-1);
    // The readers in other processes: until each has read the last version, then stopped.
    const deadline = Date.now() + 10_000;
    while (
      Date.now() < deadline &&
      children.some((c) => c.errors.length === 0 && c.states.at(-1) !== last)
    ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const c of children) c.child.stdin?.end();
    await Promise.all(children.map((c) => c.exited));
    for (const r of Object.values(readers)) r.close();
    table.close();

    expect(errors).toEqual([]);
    expect(children.flatMap((c) => c.errors)).toEqual([]);
    const order = new Map(committed.map((state, i) => [state, i]));
    const check = (states: string[]) => {
      const at = states.map((s) => order.get(s) ?? s);
      // Every read is a committed state (a torn or unknown one stays a string here).
      expect(at.filter((i) => typeof i !== "number")).toEqual([]);
      // And a reader's states go forward: scan and full-text alike.
      const backwards = at.filter((i, k) => k > 0 && (i as number) < (at[k - 1] as number));
      expect(backwards).toEqual([]);
      return new Set(at).size;
    };
    for (const name of ["fresh", "checkout"] as const) {
      expect(check(seen[name]), `${name} saw versions as they came`).toBeGreaterThan(2);
      expect(seen[name].at(-1)).toBe(last);
    }
    // A connection that neither checks nor checks out stays on the version it opened.
    check(seen.pinned);
    expect(new Set(seen.pinned)).toEqual(new Set([committed[0]]));
    for (const c of children) {
      expect(check(c.states)).toBeGreaterThan(1);
      expect(c.states.at(-1)).toBe(last);
    }
  });
});
