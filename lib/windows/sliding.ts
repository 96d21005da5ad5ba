/** The sliding windows of the original Kotlin analyzer. Pure. */
import { isPositiveInteger } from "../numbers/index.js";

/**
 * Windows of `windowSize` items, each starting `overlap` items before the previous one ended,
 * the first at 0 and the last ending at the end: `[s, min(n, s + windowSize))`. `windowSize` must
 * be a positive integer and `overlap` an integer from 0 to `windowSize - 1` (RangeError).
 */
export function slidingWindows<T>(items: readonly T[], windowSize: number, overlap: number): T[][] {
  if (!isPositiveInteger(windowSize)) {
    throw new RangeError(`windowSize must be a positive integer (got ${windowSize})`);
  }
  if (!Number.isInteger(overlap) || overlap < 0 || overlap >= windowSize) {
    throw new RangeError(
      `overlap must be an integer from 0 to windowSize - 1 (${windowSize - 1}) (got ${overlap})`,
    );
  }
  const windows: T[][] = [];
  for (let start = 0; start < items.length; ) {
    const end = Math.min(items.length, start + windowSize);
    windows.push(items.slice(start, end));
    if (end === items.length) break;
    start = end - overlap;
  }
  return windows;
}
