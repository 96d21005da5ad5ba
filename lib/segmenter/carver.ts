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
      const cut = head < tail ? candidates[head] : limit;
      spans.push(start, cut);
      if (sizes !== undefined) prefixSize = this.sizeAfterCut(sizes, start, cut, limit, prefixSize);
      start = cut;
    }
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

function sum(values: Float64Array, from: number, to: number): number {
  let total = 0;
  for (let i = from; i < to; i++) total += values[i];
  return total;
}
