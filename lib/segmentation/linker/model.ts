/**
 * The learned scorer: one hidden layer over the three feature blocks, summed into a score per
 * option (Kummerfeld et al.'s feed-forward ranker, smaller). The first layer is split by block so
 * that a candidate's own part is computed once, when it arrives, and reused for every later
 * message that considers it.
 */
import {
  CONTENT_SIZE,
  CONVERSATION_FROM,
  DISTANCE_END,
  distanceFeatures,
  PAIR_SIZE,
  PAIR_SIZE_BEFORE_OPTIONS,
  QUERY_SIZE,
} from "./features.js";
import { hashWord, type RarityTable } from "./text.js";

/** The model file's shape (`linker-model.json`): everything the scorer needs, nothing else. */
export interface LinkerModelFile {
  readonly format: "convoseg-linker/1";
  /** Hidden units. */
  readonly hidden: number;
  /** Messages a new message may link back to. */
  readonly window: number;
  /**
   * Feature-major first-layer weights, `hidden` per feature, per block. A pair block without the
   * conversation features (a model from before them) reads as one whose weights on them are zero.
   */
  readonly query: readonly number[];
  readonly content: readonly number[];
  readonly pair: readonly number[];
  readonly bias: readonly number[];
  readonly output: readonly number[];
  /** Added to "starts a conversation"'s score (see `ReplyLinkerOptions.startBias`). */
  readonly startBias: number;
  /** See `ReplyLinkerOptions.mergeMargin`; absent (a model from before it): 0, never merge. */
  readonly mergeMargin?: number;
  /** See `ReplyLinkerOptions.mergeLimit`; absent: the window's size, no bound. */
  readonly mergeLimit?: number;
  /** Training messages the frequencies were counted over. */
  readonly documents: number;
  /** Words (space-separated) and their document frequencies, aligned; rare words left out. */
  readonly vocabulary: string;
  readonly frequencies: readonly number[];
  /** How it was trained and what it scored, for the docs and the bench. */
  readonly provenance: Readonly<Record<string, unknown>>;
}

export class LinkerModel implements RarityTable {
  readonly hidden: number;
  readonly window: number;
  readonly query: Float32Array;
  readonly content: Float32Array;
  readonly pair: Float32Array;
  readonly bias: Float32Array;
  readonly output: Float32Array;
  readonly startBias: number;
  readonly mergeMargin: number;
  readonly mergeLimit: number;
  /** The distance features' first-layer input for each distance 1…window, `hidden` per row. */
  readonly byDistance: Float64Array;
  /** The listed words and their rarities, computed once from their frequencies. */
  private readonly words: readonly string[];
  private readonly rarities: Float64Array;
  /**
   * Open addressing by `hashWord`: per slot, the word's hash and its number + 1 (0: empty). A
   * lookup reads one slot or two of a compact table and one word, where a `Map` of strings would
   * chase several scattered objects, once per word of every message.
   */
  private readonly slots: Int32Array;
  private readonly rarest: number;

  constructor(file: LinkerModelFile) {
    const h = file.hidden;
    // Weights in single precision: the file holds six significant digits, and a candidate's
    // score reads a few rows of 32 weights per feature, half the memory traffic of doubles.
    const expect = (name: string, got: readonly number[], size: number): Float32Array => {
      if (got.length !== size)
        throw new RangeError(`linker model: ${name} holds ${got.length} weights, expected ${size}`);
      return Float32Array.from(got);
    };
    if (file.format !== "convoseg-linker/1")
      throw new RangeError(`linker model: format ${String(file.format)} is not convoseg-linker/1`);
    this.hidden = h;
    this.window = file.window;
    this.query = expect("query", file.query, h * QUERY_SIZE);
    this.content = expect("content", file.content, h * CONTENT_SIZE);
    this.pair =
      (file.pair.length === h * CONVERSATION_FROM ||
        file.pair.length === h * PAIR_SIZE_BEFORE_OPTIONS) &&
      h > 0
        ? padded(file.pair, h * PAIR_SIZE)
        : expect("pair", file.pair, h * PAIR_SIZE);
    this.bias = expect("bias", file.bias, h);
    this.output = expect("output", file.output, h);
    this.startBias = file.startBias;
    this.mergeMargin = file.mergeMargin ?? 0;
    this.mergeLimit = file.mergeLimit ?? file.window;
    this.byDistance = new Float64Array((file.window + 1) * h);
    const x = new Float64Array(PAIR_SIZE);
    for (let d = 1; d <= file.window; d++) {
      x.fill(0);
      distanceFeatures(d, x);
      project(this.pair, x, h, this.byDistance.subarray(d * h, (d + 1) * h), 1, DISTANCE_END);
    }
    const words = file.vocabulary === "" ? [] : file.vocabulary.split(" ");
    if (words.length !== file.frequencies.length)
      throw new RangeError(
        `linker model: ${words.length} vocabulary words but ${file.frequencies.length} frequencies`,
      );
    const documents = file.documents;
    this.words = words;
    this.rarities = Float64Array.from(file.frequencies, (f) => Math.log(documents / f));
    let size = 2;
    while (size < 2 * words.length) size *= 2;
    this.slots = new Int32Array(2 * size);
    const mask = size - 1;
    words.forEach((word, i) => {
      const hash = hashWord(word);
      let s = hash & mask;
      // A word listed twice takes its last frequency.
      while (this.slots[2 * s + 1] !== 0 && words[(this.slots[2 * s + 1] as number) - 1] !== word)
        s = (s + 1) & mask;
      this.slots[2 * s] = hash;
      this.slots[2 * s + 1] = i + 1;
    });
    this.rarest = Math.log(documents);
  }

  /** Inverse document frequency; a word the table leaves out counts as the rarest. */
  lookup(word: string, hash = hashWord(word)): number {
    const slots = this.slots;
    const mask = (slots.length >> 1) - 1;
    for (let s = hash & mask; ; s = (s + 1) & mask) {
      const i = slots[2 * s + 1] as number;
      if (i === 0) return this.rarest;
      if (slots[2 * s] === hash && this.words[i - 1] === word)
        return this.rarities[i - 1] as number;
    }
  }
}

function padded(weights: readonly number[], size: number): Float32Array {
  const out = new Float32Array(size);
  out.set(weights);
  return out;
}

/**
 * `out += Σ_i x[i] · W[i]` over the non-zero features of `[from, to)`, `W` feature-major with
 * `h` per row.
 */
export function project(
  weights: Float32Array,
  x: Float64Array,
  h: number,
  out: Float64Array,
  from = 0,
  to = x.length,
): void {
  for (let i = from; i < to; i++) {
    const v = x[i] as number;
    if (v === 0) continue;
    const row = i * h;
    for (let k = 0; k < h; k++) out[k] = (out[k] as number) + v * (weights[row + k] as number);
  }
}

/** The option's score from its summed first-layer input: `Σ_k output[k] · softsign(pre[k])`. */
export function finish(model: LinkerModel, pre: Float64Array): number {
  let score = 0;
  const out = model.output;
  for (let k = 0; k < model.hidden; k++) {
    const v = pre[k] as number;
    score += (out[k] as number) * (v / (1 + Math.abs(v)));
  }
  return score;
}
