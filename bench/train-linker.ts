/**
 * Trains the reply linker's model (`lib/segmentation/linker/linker-model.json`) on the Ubuntu IRC
 * disentanglement corpus's training split and picks the epoch by the dev split's link accuracy.
 * Deterministic: a fixed seed fixes the initial weights and the order of the examples, so the same
 * data and options write the same file.
 *
 *   npm run train:linker
 *   npm run train:linker -- --train ../shared/data/irc-train --dev ../shared/data/irc --epochs 12
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  CONTENT_SIZE,
  CONVERSATION_FROM,
  considered,
  contentFeatures,
  contentWords,
  LinkerModel,
  type LinkerModelFile,
  linkAll,
  PAIR_SIZE,
  PairContext,
  pairFeatures,
  QUERY_SIZE,
  queryFeatures,
  Window,
} from "convoseg/linker";
// Not part of the entry point's API: where the pair block's conversation features begin.
import { random as seeded } from "../local/sample.js";
import { benchArgs, usageError } from "./args.js";
import { decisionLinks, evaluate, type Scores } from "./disentangle/metrics.js";

const USAGE = `
npm run train:linker [-- options]

Trains the reply linker on the annotated training split and writes its model file. Each
annotated message of a file is one example: the new message, its window of earlier messages
(each a candidate parent) and "starts a conversation"; the gold options are its annotated
parents within the window. The epoch with the best dev link accuracy is kept.

  --train DIR    the training split (default ../shared/data/irc-train)
  --dev DIR      holds ubuntu.dev.*.jsonl (default ../shared/data/irc)
  --out FILE     the model file (default lib/segmentation/linker/linker-model.json)
  --hidden N     hidden units (default 32)
  --window N     messages a new message may link back to (default 100)
  --epochs N     passes over the training examples (default 12)
  --seed N       seed of the initial weights and the example order (default 20261206)
  --conversation-weight W
                 weight of a second loss, on the gold conversation as a whole (any of its
                 earlier messages counts as right), beside the gold parent's (default 2)
  --passes N     1: no conversation features (their weights stay zero); 2 or more: each pass
                 reads the conversations the previous pass's model makes of every file and
                 learns from them, as the linker reads its own decisions (default 2)
  --help         this text
`;

const values = benchArgs(USAGE, {
  train: { type: "string", default: "../shared/data/irc-train" },
  dev: { type: "string", default: "../shared/data/irc" },
  out: { type: "string", default: "lib/segmentation/linker/linker-model.json" },
  hidden: { type: "string", default: "32" },
  window: { type: "string", default: "100" },
  epochs: { type: "string", default: "12" },
  seed: { type: "string", default: "20261206" },
  passes: { type: "string", default: "2" },
  "conversation-weight": { type: "string", default: "2" },
});
const integer = (name: string, text: string): number => {
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) usageError(USAGE, `--${name} must be a positive integer`);
  return n;
};
const H = integer("hidden", values.hidden);
const WINDOW = integer("window", values.window);
const EPOCHS = integer("epochs", values.epochs);
const SEED = integer("seed", values.seed);
const PASSES = integer("passes", values.passes);
const CONVERSATION_WEIGHT = Number(values["conversation-weight"]);
if (!(CONVERSATION_WEIGHT >= 0)) usageError(USAGE, "--conversation-weight must be a number >= 0");
const FIRST_ANNOTATED = 1000;

interface Row {
  id: number;
  ts: string;
  user: string | null;
  text: string;
  system: boolean;
  replyTo: number[];
}

function readSplit(dir: string, pattern: RegExp): Row[][] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => pattern.test(n));
  } catch (error) {
    return usageError(USAGE, `${dir}: ${(error as Error).message}`);
  }
  if (names.length === 0) usageError(USAGE, `${dir} holds no file matching ${pattern}`);
  return names.sort().map((name) =>
    readFileSync(join(dir, name), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as Row),
  );
}

const trainFiles = readSplit(values.train, /^ubuntu\.train\..*\.jsonl$/);
const devFiles = readSplit(values.dev, /^ubuntu\.dev\..*\.jsonl$/);

// Word rarity from the training split alone: document frequency over people's messages.
const frequencies = new Map<string, number>();
let documents = 0;
for (const file of trainFiles)
  for (const row of file) {
    if (row.system) continue;
    documents++;
    for (const word of new Set(contentWords(row.text)))
      frequencies.set(word, (frequencies.get(word) ?? 0) + 1);
  }
const MIN_DF = 5;
const kept = [...frequencies]
  .filter(([, df]) => df >= MIN_DF)
  .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
const rarity = {
  lookup(word: string): number {
    const df = frequencies.get(word);
    return df === undefined || df < MIN_DF ? Math.log(documents) : Math.log(documents / df);
  },
};

/** Growable typed storage, so six million options fit in a few hundred megabytes. */
class Growable<A extends Float32Array | Int32Array> {
  data: A;
  length = 0;
  constructor(private readonly allocate: (size: number) => A) {
    this.data = allocate(1 << 16);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = this.allocate(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
}
type Floats = Growable<Float32Array>;
type Ints = Growable<Int32Array>;
const floats = (): Floats => new Growable((size) => new Float32Array(size));
const ints = (): Ints => new Growable((size) => new Int32Array(size));

interface Examples {
  query: Floats; // QUERY_SIZE per example
  content: Floats; // CONTENT_SIZE per message
  optionStart: Ints; // per example, index into options; plus a final end
  optionContent: Ints; // per option: content row, -1 for "starts a conversation"
  optionGold: Ints; // per option: GOLD if a gold parent (or start), SAME if in the query's gold conversation
  pairStart: Ints; // per option, index into pair entries; plus a final end
  pairIndex: Ints;
  pairValue: Floats;
  count: number;
  /** Annotated messages with a parent out of the window: never right, counted against accuracy. */
  unreachable: number;
}

/**
 * The examples of `files`; `conversations` (per file, message id → conversation id) are the
 * conversations a linker made of them, which the conversation features read.
 */
const GOLD = 1;
const SAME = 2;
/**
 * The limits on dev of the start bias and merge margin chosen: conversations mixed per predicted
 * one (below the 1.5 of issue 38, with room), exact F given up.
 */
const MAX_MIXING = 1.49;
const EXACT_SLACK = 4;
/** The merge margins tried on dev (`ReplyLinkerOptions.mergeMargin`; 0 never merges). */
const MERGE_MARGINS = [0, 0.2, 0.4, 0.6, 0.8, 1];
/**
 * `ReplyLinkerOptions.mergeLimit`: of 20, 30, 40, 50, 60 and none tried on dev with the shipped
 * weights at their bias and margin, the largest keeping the adjusted Rand index at least never
 * merging's (docs/conversations.md).
 */
const MERGE_LIMIT = 40;

function featurize(files: Row[][], conversations?: Map<string, string>[]): Examples {
  const ex: Examples = {
    query: floats(),
    content: floats(),
    optionStart: ints(),
    optionContent: ints(),
    optionGold: ints(),
    pairStart: ints(),
    pairIndex: ints(),
    pairValue: floats(),
    count: 0,
    unreachable: 0,
  };
  const qx = new Float64Array(QUERY_SIZE);
  const cx = new Float64Array(CONTENT_SIZE);
  const px = new Float64Array(PAIR_SIZE);
  const context = new PairContext();
  files.forEach((file, f) => {
    const decided = conversations?.[f];
    const window = new Window(WINDOW, rarity);
    const rowOf = new Map<number, number>(); // corpus id → content row
    const positionOf = new Map<number, number>();
    // Gold conversations: union-find over every annotated link (context lines join through them).
    const parentOf = new Map<number, number>();
    const find = (x: number): number => {
      let root = x;
      while (parentOf.has(root)) root = parentOf.get(root) as number;
      return root;
    };
    for (const row of file)
      for (const to of row.replyTo) {
        const a = find(row.id);
        const b = find(to);
        if (a !== b) parentOf.set(Math.max(a, b), Math.min(a, b));
      }
    const clusterOf = new Map<number, number>(); // position → gold conversation root
    for (const row of file) {
      if (row.system) continue;
      const entry = window.append({
        id: String(row.id),
        ts: Date.parse(row.ts),
        author: row.user ?? "",
        text: row.text,
        kind: /bot$/i.test(row.user ?? "") ? "bot" : "user",
      });
      entry.conversation = decided?.get(entry.id) ?? entry.id;
      clusterOf.set(entry.position, find(row.id));
      contentFeatures(entry, cx);
      const contentRow = ex.content.length / CONTENT_SIZE;
      for (const v of cx) ex.content.push(v);
      rowOf.set(row.id, contentRow);
      positionOf.set(row.id, entry.position);
      if (row.id < FIRST_ANNOTATED) continue;
      const horizon = window.horizon(entry.position);
      const gold = new Set<number>();
      for (const parent of row.replyTo) {
        const at = positionOf.get(parent);
        if (at !== undefined && at >= horizon && at < entry.position) gold.add(at);
      }
      context.begin(window, entry);
      for (const at of gold) if (!considered(entry, window.at(at), context)) gold.delete(at);
      if (row.replyTo.length > 0 && gold.size === 0) {
        ex.unreachable++;
        continue;
      }
      queryFeatures(window, entry, qx);
      for (const v of qx) ex.query.push(v);
      ex.optionStart.push(ex.optionContent.length);
      const option = (position: number): void => {
        const candidate = position < 0 ? undefined : window.at(position);
        ex.optionContent.push(candidate ? (rowOf.get(Number(candidate.id)) as number) : -1);
        ex.optionGold.push(
          position < 0
            ? gold.size === 0
              ? GOLD | SAME
              : 0
            : gold.has(position)
              ? GOLD | SAME
              : clusterOf.get(position) === clusterOf.get(entry.position)
                ? SAME
                : 0,
        );
        pairFeatures(window, entry, candidate, context, px);
        ex.pairStart.push(ex.pairIndex.length);
        for (let i = 0; i < PAIR_SIZE; i++)
          if (px[i] !== 0) {
            ex.pairIndex.push(i);
            ex.pairValue.push(px[i] as number);
          }
      };
      option(-1);
      for (let p = entry.position - 1; p >= horizon; p--)
        if (considered(entry, window.at(p), context)) option(p);
      ex.count++;
    }
  });
  ex.optionStart.push(ex.optionContent.length);
  ex.pairStart.push(ex.pairIndex.length);
  return ex;
}

class Params {
  readonly wq = new Float64Array(QUERY_SIZE * H);
  readonly wc = new Float64Array(CONTENT_SIZE * H);
  readonly wp = new Float64Array(PAIR_SIZE * H);
  readonly b = new Float64Array(H);
  readonly v = new Float64Array(H);
  all(): Float64Array[] {
    return [this.wq, this.wc, this.wp, this.b, this.v];
  }
}

const started = Date.now();
// The sample's seeded generator (mulberry32), so weights and order repeat exactly.
let random = seeded(SEED);
let params = new Params();

const pre = new Float64Array(1024 * H);
const act = new Float64Array(1024 * H);
const scores = new Float64Array(1024);
const baseQ = new Float64Array(H);

/** Forward pass of one example: fills `pre`, `act` and `scores`; returns the option count. */
function forward(ex: Examples, e: number): number {
  const start = ex.optionStart.data[e] as number;
  const end = ex.optionStart.data[e + 1] as number;
  baseQ.set(params.b);
  const q = ex.query.data;
  for (let i = 0; i < QUERY_SIZE; i++) {
    const x = q[e * QUERY_SIZE + i] as number;
    if (x !== 0)
      for (let k = 0; k < H; k++)
        baseQ[k] = (baseQ[k] as number) + x * (params.wq[i * H + k] as number);
  }
  for (let o = start; o < end; o++) {
    const j = o - start;
    const at = j * H;
    for (let k = 0; k < H; k++) pre[at + k] = baseQ[k] as number;
    const row = ex.optionContent.data[o] as number;
    if (row >= 0)
      for (let i = 0; i < CONTENT_SIZE; i++) {
        const x = ex.content.data[row * CONTENT_SIZE + i] as number;
        if (x !== 0)
          for (let k = 0; k < H; k++)
            pre[at + k] = (pre[at + k] as number) + x * (params.wc[i * H + k] as number);
      }
    for (let s = ex.pairStart.data[o] as number; s < (ex.pairStart.data[o + 1] as number); s++) {
      const i = ex.pairIndex.data[s] as number;
      const x = ex.pairValue.data[s] as number;
      for (let k = 0; k < H; k++)
        pre[at + k] = (pre[at + k] as number) + x * (params.wp[i * H + k] as number);
    }
    let score = 0;
    for (let k = 0; k < H; k++) {
      const v = pre[at + k] as number;
      const a = v / (1 + Math.abs(v));
      act[at + k] = a;
      score += (params.v[k] as number) * a;
    }
    scores[j] = score;
  }
  return end - start;
}

function accuracy(ex: Examples): number {
  let right = 0;
  for (let e = 0; e < ex.count; e++) {
    const n = forward(ex, e);
    let best = 0;
    for (let j = 1; j < n; j++) if ((scores[j] as number) > (scores[best] as number)) best = j;
    if (((ex.optionGold.data[(ex.optionStart.data[e] as number) + best] as number) & GOLD) !== 0)
      right++;
  }
  return right / (ex.count + ex.unreachable);
}

// Adam over mini-batches of examples.
const BATCH = 32;
const LEARNING_RATE = 0.003;
const grads = params.all().map((w) => new Float64Array(w.length));
let moments1 = params.all().map((w) => new Float64Array(w.length));
let moments2 = params.all().map((w) => new Float64Array(w.length));
const [gq, gc, gp, gb, gv] = grads as [
  Float64Array,
  Float64Array,
  Float64Array,
  Float64Array,
  Float64Array,
];
const dpre = new Float64Array(H);
const dq = new Float64Array(H);
let step = 0;

function backward(ex: Examples, e: number, n: number): number {
  const start = ex.optionStart.data[e] as number;
  let max = Number.NEGATIVE_INFINITY;
  for (let j = 0; j < n; j++) if ((scores[j] as number) > max) max = scores[j] as number;
  let total = 0;
  let gold = 0;
  let same = 0;
  for (let j = 0; j < n; j++) {
    const p = Math.exp((scores[j] as number) - max);
    scores[j] = p;
    total += p;
    const flags = ex.optionGold.data[start + j] as number;
    if ((flags & GOLD) !== 0) gold += p;
    if ((flags & SAME) !== 0) same += p;
  }
  dq.fill(0);
  for (let j = 0; j < n; j++) {
    const p = (scores[j] as number) / total;
    const flags = ex.optionGold.data[start + j] as number;
    const target = (flags & GOLD) !== 0 ? (scores[j] as number) / gold : 0;
    const sameTarget = (flags & SAME) !== 0 ? (scores[j] as number) / same : 0;
    const ds = (1 + CONVERSATION_WEIGHT) * p - target - CONVERSATION_WEIGHT * sameTarget;
    if (Math.abs(ds) < 1e-7) continue;
    const at = j * H;
    for (let k = 0; k < H; k++) {
      const a = act[at + k] as number;
      gv[k] = (gv[k] as number) + ds * a;
      const d = 1 + Math.abs(pre[at + k] as number);
      const g = (ds * (params.v[k] as number)) / (d * d);
      dpre[k] = g;
      dq[k] = (dq[k] as number) + g;
    }
    const o = start + j;
    const row = ex.optionContent.data[o] as number;
    if (row >= 0)
      for (let i = 0; i < CONTENT_SIZE; i++) {
        const x = ex.content.data[row * CONTENT_SIZE + i] as number;
        if (x !== 0)
          for (let k = 0; k < H; k++)
            gc[i * H + k] = (gc[i * H + k] as number) + x * (dpre[k] as number);
      }
    for (let s = ex.pairStart.data[o] as number; s < (ex.pairStart.data[o + 1] as number); s++) {
      const i = ex.pairIndex.data[s] as number;
      const x = ex.pairValue.data[s] as number;
      for (let k = 0; k < H; k++)
        gp[i * H + k] = (gp[i * H + k] as number) + x * (dpre[k] as number);
    }
  }
  for (let k = 0; k < H; k++) gb[k] = (gb[k] as number) + (dq[k] as number);
  for (let i = 0; i < QUERY_SIZE; i++) {
    const x = ex.query.data[e * QUERY_SIZE + i] as number;
    if (x !== 0)
      for (let k = 0; k < H; k++) gq[i * H + k] = (gq[i * H + k] as number) + x * (dq[k] as number);
  }
  return (
    (1 + CONVERSATION_WEIGHT) * Math.log(total) -
    Math.log(gold) -
    CONVERSATION_WEIGHT * Math.log(same)
  );
}

/** Whether the conversation features' weights stay zero (a first pass: none to read yet). */
let frozen = false;

function update(rate: number): void {
  step++;
  if (frozen) gp.fill(0, CONVERSATION_FROM * H);
  const b1 = 0.9;
  const b2 = 0.999;
  const c1 = 1 - b1 ** step;
  const c2 = 1 - b2 ** step;
  const all = params.all();
  for (let t = 0; t < all.length; t++) {
    const w = all[t] as Float64Array;
    const g = grads[t] as Float64Array;
    const m = moments1[t] as Float64Array;
    const s = moments2[t] as Float64Array;
    for (let i = 0; i < w.length; i++) {
      const gi = (g[i] as number) / BATCH;
      m[i] = b1 * (m[i] as number) + (1 - b1) * gi;
      s[i] = b2 * (s[i] as number) + (1 - b2) * gi * gi;
      w[i] =
        (w[i] as number) -
        (rate * ((m[i] as number) / c1)) / (Math.sqrt((s[i] as number) / c2) + 1e-8);
      g[i] = 0;
    }
  }
}

interface Trained {
  readonly file: LinkerModelFile;
  readonly model: LinkerModel;
  readonly accuracy: number;
  readonly epoch: number;
  readonly startBias: number;
  readonly mergeMargin: number;
  readonly scores: Scores;
}

/** One pass: fresh weights from the seed, trained on `train`, epoch and start bias from dev. */
function trainPass(pass: number, train: Examples, dev: Examples): Trained {
  random = seeded(SEED);
  params = new Params();
  for (const w of [params.wq, params.wc, params.wp])
    for (let i = 0; i < w.length; i++) w[i] = (random() * 2 - 1) * 0.2;
  for (let k = 0; k < H; k++) params.v[k] = (random() * 2 - 1) * 0.5;
  frozen = pass === 1 && PASSES > 1 ? true : PASSES === 1;
  if (frozen) params.wp.fill(0, CONVERSATION_FROM * H);
  moments1 = params.all().map((w) => new Float64Array(w.length));
  moments2 = params.all().map((w) => new Float64Array(w.length));
  for (const g of grads) g.fill(0);
  step = 0;
  const order = Int32Array.from({ length: train.count }, (_, i) => i);
  let best = { accuracy: -1, epoch: 0, weights: params.all().map((w) => Float64Array.from(w)) };
  for (let epoch = 1; epoch <= EPOCHS; epoch++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      const t = order[i] as number;
      order[i] = order[j] as number;
      order[j] = t;
    }
    const rate = LEARNING_RATE * 0.5 * (1 + Math.cos((Math.PI * (epoch - 1)) / EPOCHS));
    let loss = 0;
    for (let i = 0; i < order.length; i++) {
      const e = order[i] as number;
      loss += backward(train, e, forward(train, e));
      if ((i + 1) % BATCH === 0) update(rate);
    }
    const devAccuracy = accuracy(dev);
    console.log(
      `pass ${pass} epoch ${epoch}: loss ${(loss / train.count).toFixed(4)}, dev link accuracy ${(100 * devAccuracy).toFixed(2)}% (${((Date.now() - started) / 1000).toFixed(0)} s)`,
    );
    if (devAccuracy > best.accuracy)
      best = {
        accuracy: devAccuracy,
        epoch,
        weights: params.all().map((w) => Float64Array.from(w)),
      };
  }

  const round = (w: Float64Array): number[] => Array.from(w, (v) => Number(v.toPrecision(6)));
  const [wq, wc, wp, b, v] = best.weights as [
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
  ];
  const file: LinkerModelFile = {
    format: "convoseg-linker/1",
    hidden: H,
    window: WINDOW,
    query: round(wq),
    content: round(wc),
    pair: round(wp),
    bias: round(b),
    output: round(v),
    startBias: 0,
    mergeLimit: MERGE_LIMIT,
    documents,
    vocabulary: kept.map(([word]) => word).join(" "),
    frequencies: kept.map(([, df]) => df),
    provenance: {},
  };

  // The bias on "starts a conversation" and the margin below which a message joins its two
  // likeliest conversations, found by running the linker itself on dev (so the features the model
  // was trained on are checked against the ones it runs on): the pair keeping most conversations
  // whole among those that mix at most MAX_MIXING conversations per predicted one and keep
  // exact-conversation F within EXACT_SLACK of the best; else the best exact F.
  const model = new LinkerModel(file);
  function devScores(startBias: number, mergeMargin: number): Scores {
    return evaluate(
      devFiles.map((rows) => {
        const decisions = linkAll(
          rows.map((row) => ({
            id: String(row.id),
            ts: Date.parse(row.ts),
            author: row.user ?? "",
            text: row.text,
            kind: row.system ? "system" : /bot$/i.test(row.user ?? "") ? "bot" : "user",
          })),
          { model, startBias, mergeMargin },
        );
        const gold = new Map<number, number[]>();
        const predicted = new Map<number, number[]>();
        const system = new Set<number>();
        for (const row of rows) {
          if (row.id < FIRST_ANNOTATED) continue;
          gold.set(row.id, row.replyTo);
          if (row.system) system.add(row.id);
        }
        for (const decision of decisions) {
          const id = Number(decision.id);
          if (id >= FIRST_ANNOTATED) predicted.set(id, decisionLinks(decision));
        }
        return { gold, predicted, system };
      }),
    );
  }
  const tried: { startBias: number; mergeMargin: number; scores: Scores }[] = [];
  for (let bias = -3; bias <= 1; bias += 0.25)
    for (const mergeMargin of MERGE_MARGINS) {
      const scores = devScores(bias, mergeMargin);
      console.log(
        `pass ${pass} start bias ${bias.toFixed(2)}, merge margin ${mergeMargin}: dev exact F ${scores.exact.f.toFixed(2)}, link F ${scores.link.f.toFixed(2)}, whole ${scores.whole.toFixed(1)}, mixing ${scores.mixing.toFixed(3)}`,
      );
      tried.push({ startBias: bias, mergeMargin, scores });
    }
  let chosen = tried[0] as (typeof tried)[number];
  for (const t of tried) if (t.scores.exact.f > chosen.scores.exact.f) chosen = t;
  const floor = chosen.scores.exact.f - EXACT_SLACK;
  for (const t of tried)
    if (
      t.scores.mixing <= MAX_MIXING &&
      t.scores.exact.f >= floor &&
      t.scores.whole > chosen.scores.whole
    )
      chosen = t;
  const { startBias, mergeMargin } = chosen;
  return {
    file: { ...file, startBias, mergeMargin },
    model: new LinkerModel({ ...file, startBias, mergeMargin }),
    accuracy: best.accuracy,
    epoch: best.epoch,
    startBias,
    mergeMargin,
    scores: chosen.scores,
  };
}

/** The conversations `model` makes of each file, as the linker decides them. */
function decide(files: Row[][], model: LinkerModel): Map<string, string>[] {
  return files.map((rows) => {
    const decisions = linkAll(
      rows.map((row) => ({
        id: String(row.id),
        ts: Date.parse(row.ts),
        author: row.user ?? "",
        text: row.text,
        kind: row.system ? "system" : /bot$/i.test(row.user ?? "") ? "bot" : "user",
      })),
      // Without merging, as the shipped model's second pass was trained (a merge relabels
      // earlier messages, which per-message examples cannot show).
      { model, mergeMargin: 0 },
    );
    return new Map(decisions.map((d) => [d.id, d.conversation]));
  });
}

let trained: Trained | undefined;
for (let pass = 1; pass <= PASSES; pass++) {
  const train = featurize(trainFiles, trained && decide(trainFiles, trained.model));
  const dev = featurize(devFiles, trained && decide(devFiles, trained.model));
  console.log(
    `pass ${pass}: ${train.count} training examples (${train.optionContent.length} options), ${dev.count} dev; features ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  trained = trainPass(pass, train, dev);
}
const final = trained as Trained;
const { file, epoch, startBias, mergeMargin } = final;

writeFileSync(
  values.out,
  `${JSON.stringify({
    ...file,
    startBias,
    mergeMargin,
    provenance: {
      data: "Ubuntu IRC disentanglement corpus (Kummerfeld et al., ACL 2019), CC-BY-4.0: trained on the train split; epoch, start bias and merge margin chosen on dev",
      trainer: "bench/train-linker.ts",
      seed: SEED,
      epochs: EPOCHS,
      passes: PASSES,
      epoch,
      devLinkAccuracy: Number((100 * final.accuracy).toFixed(2)),
      devExactF: Number(final.scores.exact.f.toFixed(2)),
      devLinkF: Number(final.scores.link.f.toFixed(2)),
      devWhole: Number(final.scores.whole.toFixed(1)),
      devMixing: Number(final.scores.mixing.toFixed(3)),
    },
  } satisfies LinkerModelFile)}\n`,
);
console.log(
  `epoch ${epoch}, start bias ${startBias} and merge margin ${mergeMargin} kept: dev exact F ${final.scores.exact.f.toFixed(2)}; wrote ${values.out}`,
);
