/**
 * Stable ascending order of a list of timestamps, without a comparator sort.
 *
 * The segmenter sorts by timestamp with ties in input order. A comparator sort over objects is
 * what dominated the straightforward implementation, so this is an LSD radix sort over the IEEE-754
 * bits of the timestamps, which is stable by construction and linear in the number of items.
 */

const DIGIT_BITS = 11;
const DIGIT_MASK = (1 << DIGIT_BITS) - 1;
const BUCKETS = 1 << DIGIT_BITS;
const PASSES = Math.ceil(64 / DIGIT_BITS);

/** Index of the low and high 32-bit word of a float64 in a Uint32Array view of it. */
const LOW_WORD = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;
const HIGH_WORD = 1 - LOW_WORD;

/**
 * The positions of `times` in stable ascending order, or `undefined` when `times` is already
 * non-decreasing (the common case for a chat stream, which then costs one linear scan).
 * Every value must be a finite number.
 */
export function stableAscendingOrder(times: Float64Array): Uint32Array | undefined {
  if (isNonDecreasing(times)) return undefined;
  const n = times.length;
  let low = new Uint32Array(n);
  let high = new Uint32Array(n);
  let order = new Uint32Array(n);
  writeSortableKeys(times, low, high, order);
  const histograms = digitHistograms(low, high);
  let nextLow = new Uint32Array(n);
  let nextHigh = new Uint32Array(n);
  let nextOrder = new Uint32Array(n);
  for (let pass = 0; pass < PASSES; pass++) {
    const counts = histograms.subarray(pass * BUCKETS, (pass + 1) * BUCKETS);
    if (isSingleBucket(counts, n)) continue;
    scatterByDigit(pass * DIGIT_BITS, counts, low, high, order, nextLow, nextHigh, nextOrder);
    [low, nextLow] = [nextLow, low];
    [high, nextHigh] = [nextHigh, high];
    [order, nextOrder] = [nextOrder, order];
  }
  return order;
}

function isNonDecreasing(times: Float64Array): boolean {
  for (let i = 1; i < times.length; i++) {
    if (times[i] < times[i - 1]) return false;
  }
  return true;
}

/**
 * Maps each float64 to a 64-bit unsigned key (split in two words) whose unsigned order is the
 * numeric order: flip every bit of negatives, only the sign bit of positives. Negative zero is
 * first turned into positive zero so that it ties with it, as numeric comparison does.
 */
function writeSortableKeys(
  times: Float64Array,
  low: Uint32Array,
  high: Uint32Array,
  order: Uint32Array,
): void {
  const scratch = new Float64Array(1);
  const words = new Uint32Array(scratch.buffer);
  for (let i = 0; i < times.length; i++) {
    scratch[0] = times[i] + 0;
    const hi = words[HIGH_WORD];
    const lo = words[LOW_WORD];
    if (hi & 0x80000000) {
      high[i] = ~hi >>> 0;
      low[i] = ~lo >>> 0;
    } else {
      high[i] = (hi | 0x80000000) >>> 0;
      low[i] = lo;
    }
    order[i] = i;
  }
}

/** Counts of every digit value for every pass, gathered in one read of the keys. */
function digitHistograms(low: Uint32Array, high: Uint32Array): Uint32Array {
  const histograms = new Uint32Array(PASSES * BUCKETS);
  for (let i = 0; i < low.length; i++) {
    const lo = low[i];
    const hi = high[i];
    for (let pass = 0; pass < PASSES; pass++) {
      histograms[pass * BUCKETS + digitOf(lo, hi, pass * DIGIT_BITS)]++;
    }
  }
  return histograms;
}

/** A pass whose digit is the same for every key would leave the order as it is: skip it. */
function isSingleBucket(counts: Uint32Array, n: number): boolean {
  for (let d = 0; d < BUCKETS; d++) {
    if (counts[d] !== 0) return counts[d] === n;
  }
  return true;
}

function digitOf(lo: number, hi: number, shift: number): number {
  if (shift + DIGIT_BITS <= 32) return (lo >>> shift) & DIGIT_MASK;
  if (shift >= 32) return (hi >>> (shift - 32)) & DIGIT_MASK;
  return ((lo >>> shift) | (hi << (32 - shift))) & DIGIT_MASK;
}

/** One stable counting-sort pass on the digit at `shift`, moving keys and positions together. */
function scatterByDigit(
  shift: number,
  counts: Uint32Array,
  low: Uint32Array,
  high: Uint32Array,
  order: Uint32Array,
  toLow: Uint32Array,
  toHigh: Uint32Array,
  toOrder: Uint32Array,
): void {
  const offsets = new Uint32Array(BUCKETS);
  for (let d = 1; d < BUCKETS; d++) offsets[d] = offsets[d - 1] + counts[d - 1];
  for (let i = 0; i < low.length; i++) {
    const lo = low[i];
    const hi = high[i];
    const at = offsets[digitOf(lo, hi, shift)]++;
    toLow[at] = lo;
    toHigh[at] = hi;
    toOrder[at] = order[i];
  }
}
