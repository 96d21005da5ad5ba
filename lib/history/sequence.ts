import { isPositiveInteger } from "../base/numbers/index.js";

/**
 * Positions that a store writes beside its messages, derived from the wall clock.
 *
 * A store that orders by wall-clock positions cannot keep the Writer's in-order promise by
 * itself: a clock that steps backward (an NTP correction, a suspended host) would place a later
 * batch before an earlier one, and the messages of one batch can share an instant. A Sequence
 * hands out a contiguous, strictly increasing run per call and never reissues a position, which
 * is what makes that promise hold. It orders the writes made through one instance; ordering
 * across instances stays implementation-defined. Positions are nanoseconds since the epoch, as
 * bigint, bounded like the original's int64.
 */
export class Sequence {
  static readonly MAX = 2n ** 63n - 1n;
  private last = 0n;
  private readonly stride: bigint;

  /** @param strideNs distance between consecutive positions: 1 unless positions are coarser. */
  constructor(strideNs: bigint | number = 1n) {
    const stride =
      typeof strideNs === "bigint" ? strideNs : Number.isInteger(strideNs) ? BigInt(strideNs) : 0n;
    if (stride <= 0n) {
      throw new RangeError(`history: sequence stride must be positive, got ${String(strideNs)}ns`);
    }
    this.stride = stride;
  }

  /**
   * The first of `count` positions `first, first + stride, …`: the wall clock when it is past the
   * previous reservation, otherwise the slot right after it. Throws (consuming nothing) for a
   * non-positive count or when the reservation would pass the int64 range.
   */
  reserve(count: number): bigint {
    return this.reserveAt(BigInt(Date.now()) * 1_000_000n, count);
  }

  /** {@link reserve} with the clock reading given: the testable core. */
  reserveAt(nowNs: bigint, count: number): bigint {
    if (!isPositiveInteger(count)) {
      throw new RangeError("history: sequence count must be positive");
    }
    if (this.last === Sequence.MAX) throw new RangeError("history: sequence exhausted");
    const first = nowNs <= this.last ? this.last + 1n : nowNs;
    if (BigInt(count) > (Sequence.MAX - first + 1n) / this.stride) {
      throw new RangeError("history: sequence reservation exceeds int64");
    }
    this.last = first + BigInt(count) * this.stride - 1n;
    return first;
  }
}
