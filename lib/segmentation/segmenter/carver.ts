/**
 * Greedy carving of one conversation into size-capped segments, in linear time.
 *
 * Works on time-sorted columns: `times` (epoch ms) and optional `sizes` (absent means one unit per
 * item). Segments are half-open spans `[start, end)` appended to a flat array as `start, end`.
 */
export class Carver {
  /**
   * @param candidates room for `times.length` cut candidates, kept with strictly decreasing gaps
   *   from head to tail: a sliding-window maximum.
   */
  constructor(
    private readonly times: Float64Array,
    private readonly sizes: Float64Array | undefined,
    private readonly sizesAreExactIntegers: boolean,
    private readonly maxSize: number,
    private readonly minItems: number,
    private readonly candidates: Int32Array,
    private readonly links?: ReplyPositions,
  ) {}

  /**
   * Carves `[from, to)` from the front. Each step takes the longest prefix whose size fits
   * `maxSize` (at least one item); if it reaches `to` it is the last segment, otherwise the cut is
   * the largest gap `t[k] - t[k-1]` for `k` in `[start + minItems, limit]`, the later index on a
   * tie, or `limit` when that range is empty. Both ends of that range only move forward, so a
   * monotonic queue finds each cut in amortised constant time.
   */
  carve(from: number, to: number, spans: number[]): void {
    const { times, sizes, maxSize, minItems, candidates } = this;
    let start = from;
    let limit = from;
    let prefixSize = 0;
    let head = 0;
    let tail = 0;
    let nextCandidate = from + 1;
    for (;;) {
      if (sizes === undefined) {
        limit = Math.min(start + maxSize, to);
      } else {
        while (limit < to && prefixSize + sizes[limit] <= maxSize) prefixSize += sizes[limit++];
        if (limit === start) prefixSize += sizes[limit++];
      }
      if (limit === to) {
        spans.push(start, to);
        return;
      }
      for (; nextCandidate <= limit; nextCandidate++) {
        const gap = times[nextCandidate] - times[nextCandidate - 1];
        while (tail > head && this.gapBefore(candidates[tail - 1]) <= gap) tail--;
        candidates[tail++] = nextCandidate;
      }
      const lowest = start + minItems;
      while (head < tail && candidates[head] < lowest) head++;
      let cut = head < tail ? candidates[head] : limit;
      if (this.links !== undefined && head < tail) {
        cut = this.leastSevering(this.links, start, lowest, limit) ?? cut;
      }
      spans.push(start, cut);
      if (sizes !== undefined) prefixSize = this.sizeAfterCut(sizes, start, cut, limit, prefixSize);
      start = cut;
    }
  }

  /**
   * The cut in `[lowest, limit]` that severs the fewest reply links between `[start, k)` and
   * `[k, limit]`, then the largest gap, then the later index; undefined when no link lies wholly
   * in `[start, limit]` (then every score is 0 and the largest-gap cut stands). Links reaching
   * before `start` are severed already and links past `limit` are not read, so the decision
   * depends on the items up to the limit only, as the largest-gap rule does.
   */
  private leastSevering(
    { parents, linkedBefore, severedDiff }: ReplyPositions,
    start: number,
    lowest: number,
    limit: number,
  ): number | undefined {
    if (linkedBefore[limit + 1] === linkedBefore[start]) return undefined;
    severedDiff.fill(0, start, limit + 2);
    let links = 0;
    for (let x = start; x <= limit; x++) {
      const p = parents[x];
      if (p < 0) continue;
      const lo = Math.min(x, p);
      const hi = Math.max(x, p);
      if (lo < start || hi > limit || lo === hi) continue;
      // Cuts k in [lo + 1, hi] separate the pair.
      severedDiff[lo + 1]++;
      severedDiff[hi + 1]--;
      links++;
    }
    if (links === 0) return undefined;
    let severed = 0;
    for (let k = start + 1; k < lowest; k++) severed += severedDiff[k];
    let best = limit;
    let fewest = Number.POSITIVE_INFINITY;
    let widest = Number.NEGATIVE_INFINITY;
    for (let k = lowest; k <= limit; k++) {
      severed += severedDiff[k];
      const gap = this.gapBefore(k);
      if (severed < fewest || (severed === fewest && gap >= widest)) {
        fewest = severed;
        widest = gap;
        best = k;
      }
    }
    return best;
  }

  private gapBefore(k: number): number {
    return this.times[k] - this.times[k - 1];
  }

  /**
   * Size of `[cut, limit)`. Integer sizes subtract exactly; fractional ones are summed again from
   * `cut` so that the float rounding is the same as summing the new prefix from its start.
   */
  private sizeAfterCut(
    sizes: Float64Array,
    start: number,
    cut: number,
    limit: number,
    prefixSize: number,
  ): number {
    if (this.sizesAreExactIntegers) return prefixSize - sum(sizes, start, cut);
    return sum(sizes, cut, limit);
  }
}

/** Reply links over sorted positions, for {@link Carver.leastSevering}. */
export interface ReplyPositions {
  /** The sorted position of each item's reply target, or -1 when it has none known. */
  parents: Int32Array;
  /** How many items before each sorted position have a parent: a window without links is skipped. */
  linkedBefore: Int32Array;
  /** Scratch for the severed-link counts, `times.length + 2` long. */
  severedDiff: Int32Array;
}

function sum(values: Float64Array, from: number, to: number): number {
  let total = 0;
  for (let i = from; i < to; i++) total += values[i];
  return total;
}
