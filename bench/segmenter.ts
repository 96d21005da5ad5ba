/**
 * Throughput of ConversationSegmenter against a literal transcription of the spec's steps,
 * measured in the same run on the same inputs: items/second for 10^4..10^7 items, sorted and
 * shuffled, the ratio between the two, and how the cost per item grows from 10^5 to 10^7.
 *
 *   npm run bench                 all sizes (about five minutes)
 *   npm run bench -- --max 1e6    stop at 10^6
 */
import { ConversationSegmenter } from "convoseg/segmenter";
import { random } from "../local/sample.js";
import { literalClosedSegments } from "../test/segmentation/segmenter/literal-segmenter.js";
import { benchArgs, usageError } from "./args.js";

interface Message {
  id: number;
  ts: number;
}

const SETTLE = 24 * 60 * 60 * 1000;
const MAX_SIZE = 500;
const TARGET_SORTED = 1.5;
const TARGET_SHUFFLED = 4;
/** Cost per item at 10^7 within this factor of 10^5 counts as linear growth. */
const LINEAR_TOLERANCE = 2;

const USAGE = `
npm run bench [-- --max N]

ConversationSegmenter against a literal transcription of the spec's steps, on the same inputs
in the same run: items per second for 10^4 to 10^7 items, sorted and shuffled, their ratio, and
how the cost per item grows from 10^5 to 10^7 (about five minutes).

  --max N    the largest input, in items (default 1e7; 1e6 stops at 10^6)
  --help     this text
`;
const values = benchArgs(USAGE, { max: { type: "string", default: "1e7" } });
const maxItems = Number(values.max);
if (!(maxItems >= 1e4))
  usageError(USAGE, `--max must be a number of items from 1e4 (got ${values.max})`);
const sizes = [1e4, 1e5, 1e6, 1e7].filter((n) => n <= maxItems);

/**
 * A chat-like channel: second-resolution bursts, lulls of minutes, overnight pauses below settle,
 * and now and then a silence of days that ends a conversation.
 */
function chatStream(n: number, next: () => number): Message[] {
  const messages: Message[] = new Array(n);
  let ts = Date.UTC(2024, 0, 1);
  for (let id = 0; id < n; id++) {
    const roll = next();
    if (roll < 0.0005) ts += SETTLE + Math.floor(next() * 3 * SETTLE);
    else if (roll < 0.002) ts += Math.floor((6 + next() * 14) * 3600_000);
    else if (roll < 0.05) ts += Math.floor(next() * 1800_000);
    else if (roll < 0.4) ts += 0;
    else ts += Math.floor(next() * 60) * 1000;
    messages[id] = { id, ts };
  }
  return messages;
}

function shuffled<T>(items: T[], next: () => number): T[] {
  const copy = items.slice();
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}

type Run = (items: Message[], now: number) => Message[][];
const segmenter = new ConversationSegmenter({ maxSize: MAX_SIZE, settle: SETTLE });
const fast: Run = (items, now) => segmenter.closedSegments(items, now, (m) => m.ts);
const literal: Run = (items, now) =>
  literalClosedSegments(items, now, (m) => m.ts, undefined, {
    maxSize: MAX_SIZE,
    settle: SETTLE,
    minItems: 1,
  });

const collectGarbage = (globalThis as { gc?: () => void }).gc ?? (() => {});

/**
 * Median wall time in ms of `repeats` runs, and the result of the last one. The heap is collected
 * before each run, outside the timing, so that no run pays for its predecessor's garbage.
 */
function time(run: Run, items: Message[], now: number, repeats: number) {
  const times: number[] = [];
  let result: Message[][] = [];
  for (let r = 0; r < repeats; r++) {
    result = [];
    collectGarbage();
    const start = performance.now();
    result = run(items, now);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)], result };
}

function sameSegments(a: Message[][], b: Message[][]): boolean {
  if (a.length !== b.length) return false;
  return a.every((segment, i) => {
    const other = b[i];
    return segment.length === other.length && segment.every((m, j) => m === other[j]);
  });
}

const rate = (n: number, ms: number) => `${(((n / ms) * 1000) / 1e6).toFixed(2)} M/s`;
const repeatsFor = (n: number) => (n <= 1e5 ? 9 : n <= 1e6 ? 5 : 3);

interface Row {
  n: number;
  order: "sorted" | "shuffled";
  fastMs: number;
  literalMs: number;
}

const rows: Row[] = [];
console.log(
  `ConversationSegmenter vs literal spec steps (maxSize ${MAX_SIZE}, settle 24h, minItems 1), median of runs`,
);
console.log("items      order     convoseg      literal       ratio  segments");
const next = random(42);
const warmUp = chatStream(1e4, next);
for (let i = 0; i < 20; i++) {
  fast(warmUp, 0);
  literal(warmUp, 0);
}
for (const n of sizes) {
  const sorted = chatStream(n, next);
  const now = sorted[n - 1].ts + SETTLE + 1;
  for (const order of ["sorted", "shuffled"] as const) {
    const items = order === "sorted" ? sorted : shuffled(sorted, next);
    const repeats = repeatsFor(n);
    const mine = time(fast, items, now, repeats);
    const reference = time(literal, items, now, repeats);
    if (!sameSegments(mine.result, reference.result)) {
      throw new Error(`results differ at n=${n} (${order})`);
    }
    rows.push({ n, order, fastMs: mine.ms, literalMs: reference.ms });
    console.log(
      `${n.toExponential(0).padEnd(10)} ${order.padEnd(9)} ${rate(n, mine.ms).padStart(10)} ${rate(n, reference.ms).padStart(12)} ${(reference.ms / mine.ms).toFixed(2).padStart(10)}x  ${mine.result.length}`,
    );
  }
}

const find = (n: number, order: Row["order"]) => rows.find((r) => r.n === n && r.order === order);
const verdict = (ok: boolean) => (ok ? "meets target" : "MISSES target");
console.log("");
for (const [order, target] of [
  ["sorted", TARGET_SORTED],
  ["shuffled", TARGET_SHUFFLED],
] as const) {
  const row = find(1e6, order);
  if (!row) continue;
  const ratio = row.literalMs / row.fastMs;
  console.log(
    `speed-up at 10^6 ${order}: ${ratio.toFixed(2)}x (target >= ${target}x) ${verdict(ratio >= target)}`,
  );
}
for (const order of ["sorted", "shuffled"] as const) {
  const small = find(1e5, order);
  const large = find(1e7, order);
  if (!small || !large) continue;
  const growth = large.fastMs / 1e7 / (small.fastMs / 1e5);
  console.log(
    `cost per item 10^7 vs 10^5, ${order}: ${growth.toFixed(2)}x (linear: <= ${LINEAR_TOLERANCE}x) ${verdict(growth <= LINEAR_TOLERANCE)}`,
  );
}
