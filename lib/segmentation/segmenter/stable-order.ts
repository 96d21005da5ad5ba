/**
 * Stable ascending sort of timestamps that also reports where each one came from, without a
 * comparator sort.
 *
 * The segmenter sorts by timestamp with ties in input order. A comparator sort over objects is
 * what dominated the straightforward implementation, so this is an LSD radix sort over the IEEE-754
 * bits of the timestamps: stable by construction, linear in the number of items, and working in
 * caller-provided memory so that large inputs cost no fresh allocations.
 */

const DIGIT_BITS = 11;
const DIGIT_MASK = (1 << DIGIT_BITS) - 1;
const BUCKETS = 1 << DIGIT_BITS;
const PASSES = Math.ceil(64 / DIGIT_BITS);
const SIGN = 0x80000000;

/** Index of the low and high 32-bit word of a float64 in a Uint32Array view of it. */
const LOW = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;
const HIGH = 1 - LOW;

/** Working memory for {@link sortStable} over `n` timestamps. */
export interface SortScratch {
  /** `2n` words. */
  spareKeys: Uint32Array;
  /** `n` positions each. */
  order: Uint32Array;
  spareOrder: Uint32Array;
}

export function sortScratch(n: number): SortScratch {
  return {
    spareKeys: new Uint32Array(2 * n),
    order: new Uint32Array(n),
    spareOrder: new Uint32Array(n),
  };
}

/**
 * Sorts `times` ascending in place, equal values keeping their relative order, and returns the
 * original position of each sorted value; returns `undefined` (leaving `times` as it is) when it
 * is already non-decreasing, the common case for a chat stream, which then costs one scan.
 * Every value must be a finite number; negative zero comes out as positive zero.
 */
export function sortStable(times: Float64Array, scratch: SortScratch): Uint32Array | undefined {
  if (isNonDecreasing(times)) return undefined;
  const n = times.length;
  let keys = new Uint32Array(times.buffer, times.byteOffset, 2 * n);
  let order = scratch.order;
  let spareKeys = scratch.spareKeys.subarray(0, 2 * n);
  let spareOrder = scratch.spareOrder;
  toSortableKeys(keys, order);
  const histograms = digitHistograms(keys);
  for (let pass = 0; pass < PASSES; pass++) {
    const counts = histograms.subarray(pass * BUCKETS, (pass + 1) * BUCKETS);
    if (isSingleBucket(counts, n)) continue;
    scatterByDigit(pass * DIGIT_BITS, counts, keys, order, spareKeys, spareOrder);
    [keys, spareKeys] = [spareKeys, keys];
    [order, spareOrder] = [spareOrder, order];
  }
  const inPlace = new Uint32Array(times.buffer, times.byteOffset, 2 * n);
  if (keys !== inPlace) inPlace.set(keys);
  fromSortableKeys(inPlace);
  return order;
}

function isNonDecreasing(times: Float64Array): boolean {
  for (let i = 1; i < times.length; i++) {
    if (times[i] < times[i - 1]) return false;
  }
  return true;
}

/**
 * Rewrites each float64 (as two words) into a 64-bit unsigned key whose unsigned order is the
 * numeric order: flip every bit of negatives, only the sign bit of positives. Negative zero first
 * becomes positive zero, so that it ties with it as numeric comparison does.
 */
function toSortableKeys(keys: Uint32Array, order: Uint32Array): void {
  for (let i = 0; i < order.length; i++) {
    const lo = keys[2 * i + LOW];
    const hi = keys[2 * i + HIGH];
    if (hi === SIGN && lo === 0) {
      keys[2 * i + HIGH] = SIGN;
    } else if (hi & SIGN) {
      keys[2 * i + HIGH] = ~hi;
      keys[2 * i + LOW] = ~lo;
    } else {
      keys[2 * i + HIGH] = hi | SIGN;
    }
    order[i] = i;
  }
}

/** Inverse of {@link toSortableKeys}, turning sorted keys back into the float64 values. */
function fromSortableKeys(keys: Uint32Array): void {
  for (let i = 0; i < keys.length; i += 2) {
    const hi = keys[i + HIGH];
    if (hi & SIGN) {
      keys[i + HIGH] = hi ^ SIGN;
    } else {
      keys[i + HIGH] = ~hi;
      keys[i + LOW] = ~keys[i + LOW];
    }
  }
}

/** Counts of every digit value for every pass, gathered in one read of the keys. */
function digitHistograms(keys: Uint32Array): Uint32Array {
  const histograms = new Uint32Array(PASSES * BUCKETS);
  for (let i = 0; i < keys.length; i += 2) {
    const lo = keys[i + LOW];
    const hi = keys[i + HIGH];
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
  keys: Uint32Array,
  order: Uint32Array,
  toKeys: Uint32Array,
  toOrder: Uint32Array,
): void {
  const offsets = new Uint32Array(BUCKETS);
  for (let d = 1; d < BUCKETS; d++) offsets[d] = offsets[d - 1] + counts[d - 1];
  for (let i = 0; i < order.length; i++) {
    const lo = keys[2 * i + LOW];
    const hi = keys[2 * i + HIGH];
    const at = offsets[digitOf(lo, hi, shift)]++;
    toKeys[2 * at + LOW] = lo;
    toKeys[2 * at + HIGH] = hi;
    toOrder[at] = order[i];
  }
}
