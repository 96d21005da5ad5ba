/**
 * `npm run bench:report`: the report of a big channel (the IRC stream, 178,963 messages) as a
 * reader gets it: the file's size, its first frame and load event in headless Chromium (median
 * of N loads), and its search: how long the page takes to index it after the load, the heap it
 * then holds, and how long queries take. The segments come from `segment` (contiguous, as the
 * figures in docs/report.md were made), the page from `report`, both run as a user runs them.
 */

import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import { benchArgs, usageError } from "./args.js";

const USAGE = `Usage: npm run bench:report -- [--input FILE] [--loads N] [--json]

Segments FILE, writes its report, and loads it in headless Chromium (/usr/bin/chromium).

Options:
  --input FILE   the chat input (default ../shared/data/irc/ubuntu-stream.jsonl)
  --loads N      page loads timed (default 7; the median is reported)
  --json         one JSON object instead of the lines
  -h, --help     this help`;

const values = benchArgs(USAGE, {
  input: { type: "string", default: "../shared/data/irc/ubuntu-stream.jsonl" },
  loads: { type: "string", default: "7" },
  json: { type: "boolean", default: false },
});
const loads = Number(values.loads);
if (!Number.isInteger(loads) || loads < 1)
  usageError(USAGE, "--loads must be a whole number above 0");
try {
  statSync(values.input);
} catch (error) {
  usageError(USAGE, `--input ${values.input}: cannot read it (${(error as Error).message})`);
}

/** Queries timed once the index is built: common and rare words, a prefix, stop words. */
const QUERIES = ["nvidia driver", "wireless driver", "grub", "how do i mount ntfs", "ub"];

const dir = mkdtempSync(join(tmpdir(), "convoseg-bench-report-"));
const cli = (args: string[], stdout: number | "ignore" = "ignore") =>
  execFileSync(process.execPath, ["--import", "tsx", "cli/main.ts", ...args], {
    stdio: ["ignore", stdout, "inherit"],
  });
const segments = join(dir, "segments.jsonl");
const out = openSync(segments, "w");
cli(["segment", values.input, "--json", "--min-items", "1", "--conversations", "contiguous"], out);
closeSync(out);
const page = join(dir, "report.html");
cli(["report", "--segments", segments, "--input", values.input, "--out", page]);
const bytes = statSync(page).size;
const gzipped = gzipSync(readFileSync(page)).length;

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--enable-precise-memory-info", "--js-flags=--expose-gc"],
});
const firstFrame: number[] = [];
const loaded: number[] = [];
let search: { indexMs: number; queries: Record<string, number> } | undefined;
/** The page's JavaScript heap after a garbage collection: after its index is built, if it has one. */
let heapMb = 0;
for (let i = 0; i < loads; i++) {
  const tab = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await tab.goto(`file://${page}`);
  await tab.waitForSelector("html[data-ready]", { timeout: 120_000 });
  await tab.waitForLoadState("load");
  firstFrame.push(Number(await tab.evaluate("document.documentElement.dataset.renderedMs")));
  loaded.push(
    Number(await tab.evaluate(`performance.getEntriesByType("navigation")[0].loadEventEnd`)),
  );
  // A page without the search box (an older report, for a before-and-after) has nothing to build.
  if (i === 0 && (await tab.locator("#search-input").count()) > 0) {
    // The index is built once the page idles after its load: the first load waits for it.
    await tab.waitForSelector("html[data-search-indexed-ms]", { timeout: 600_000 });
    const queries: Record<string, number> = {};
    for (const query of QUERIES) {
      // From the input event to the status naming the hits, less the typing pause.
      queries[query] = Number(
        await tab.evaluate(`(async () => {
          const input = document.getElementById("search-input");
          const status = document.getElementById("search-status");
          status.textContent = "";
          input.value = ${JSON.stringify(query)};
          const started = performance.now();
          input.dispatchEvent(new Event("input"));
          await new Promise((resolve) => {
            const check = () => (status.textContent.includes("hit") ? resolve() : setTimeout(check, 1));
            check();
          });
          return performance.now() - started - 150;
        })()`),
      );
    }
    search = {
      indexMs: Number(await tab.evaluate("document.documentElement.dataset.searchIndexedMs")),
      queries,
    };
  }
  if (i === 0)
    heapMb = Number(await tab.evaluate("(gc(), performance.memory.usedJSHeapSize / 1e6)"));
  await tab.close();
}
await browser.close();
rmSync(dir, { recursive: true, force: true });

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];
const result = {
  input: values.input,
  bytes,
  gzipped,
  loads,
  firstFrameMs: median(firstFrame),
  loadEventMs: Math.round(median(loaded)),
  heapMb: Math.round(heapMb),
  search,
};
if (values.json) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;
  const ms = (n: number) => `${Math.round(n)} ms`;
  const lines = [
    `report of ${values.input}: ${mb(bytes)} (${mb(gzipped)} gzipped)`,
    `first frame: median ${ms(result.firstFrameMs)} of ${loads} loads (${firstFrame.map(ms).join(", ")})`,
    `load event: median ${ms(result.loadEventMs)}`,
    `the page's JavaScript heap${search ? " with its search index" : ""}: ${result.heapMb} MB`,
    search && `search index built after the load in ${ms(search.indexMs)}`,
    search &&
      `queries, after the typing pause: ${Object.entries(search.queries)
        .map(([q, t]) => `"${q}" ${ms(t)}`)
        .join(", ")}`,
  ];
  process.stdout.write(`${lines.filter(Boolean).join("\n")}\n`);
}
