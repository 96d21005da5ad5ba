/** The sliding windows of the original Kotlin analyzer, and their reply-aware variant. Pure. */
import { isPositiveInteger } from "../../base/numbers/index.js";

/**
 * The index of the item that item `index` replies to, or undefined (a target at or after the
 * reply, or out of range, is no link).
 */
export type ReplyTarget = (index: number) => number | undefined;

/**
 * The one rule between a sliding window's size and its overlap, wherever either is set (the
 * windows here, the extraction function's environment, the deployment's settings): the overlap
 * is less than the window, so that each window moves on. The problem, worded for the setting
 * `windowSizeName` names the size by, or undefined when the pair is fine.
 */
export function overlapProblem(
  windowSize: number,
  overlap: number,
  windowSizeName = "windowSize",
): string | undefined {
  return overlap < windowSize
    ? undefined
    : `must be less than ${windowSizeName} (${windowSize}) (got ${overlap})`;
}

/**
 * Windows of `windowSize` items, each starting `overlap` items before the previous one ended,
 * the first at 0 and the last ending at the end: `[s, min(n, s + windowSize))`. `windowSize` must
 * be a positive integer and `overlap` an integer from 0 to `windowSize - 1` (RangeError).
 * With `replyTarget`, see {@link slidingWindowSpans}.
 */
export function slidingWindows<T>(
  items: readonly T[],
  windowSize: number,
  overlap: number,
  replyTarget?: ReplyTarget,
  maxWindows?: number,
): T[][] {
  return slidingWindowSpans(items.length, windowSize, overlap, replyTarget, maxWindows).map(
    ([start, end]) => items.slice(start, end),
  );
}

/**
 * How many plain sliding windows `n` items take: one when they fit, else one more per
 * `windowSize - overlap` items past the first window's `overlap`.
 */
export function plainWindowCount(n: number, windowSize: number, overlap: number): number {
  return n <= 0 ? 0 : Math.max(1, Math.ceil((n - overlap) / (windowSize - overlap)));
}

/**
 * The `[start, end)` spans of {@link slidingWindows} over `n` items. With `replyTarget`, a window
 * starts earlier than `overlap` says (but after the previous window's start) so that it holds the
 * target of each reply it is the first to show: every reply whose target lies fewer than
 * `windowSize` items before it shares a window with that target. Without links the spans are the
 * plain ones.
 *
 * With `maxWindows` as well, a window is pulled back only as far as the items after it can still
 * be covered within `maxWindows` windows in all (the earliest target that allows it wins): the
 * rule then never costs more calls than that. Pass {@link plainWindowCount} to keep the plain
 * number of windows, which is what a deployment sizes its timeouts and token budget from; a chat
 * whose every message answers one `windowSize - 1` back would otherwise take a window per item.
 */
export function slidingWindowSpans(
  n: number,
  windowSize: number,
  overlap: number,
  replyTarget?: ReplyTarget,
  maxWindows?: number,
): [number, number][] {
  if (!isPositiveInteger(windowSize)) {
    throw new RangeError(`windowSize must be a positive integer (got ${windowSize})`);
  }
  if (!Number.isInteger(overlap) || overlap < 0) {
    throw new RangeError(`overlap must be an integer from 0 (got ${overlap})`);
  }
  const problem = overlapProblem(windowSize, overlap);
  if (problem !== undefined) throw new RangeError(`overlap ${problem}`);
  const spans: [number, number][] = [];
  let start = 0;
  let end = Math.min(n, windowSize);
  while (n > 0) {
    spans.push([start, end]);
    if (end === n) break;
    let next = end - overlap;
    if (replyTarget !== undefined) {
      // The items this window shows first are [end, next + windowSize); pull the start back to
      // the earliest target among them that a window after `start` can still hold.
      const shownFirst = Math.min(n, next + windowSize);
      // The windows so far and the plain ones from `from` on: what a pull-back to it costs.
      const fits = (from: number) =>
        maxWindows === undefined ||
        spans.length + plainWindowCount(n - from, windowSize, overlap) <= maxWindows;
      for (let reply = end; reply < shownFirst; reply++) {
        const target = replyTarget(reply);
        if (
          target !== undefined &&
          target > start &&
          target < next &&
          reply - target < windowSize &&
          fits(target)
        ) {
          next = target;
        }
      }
    }
    start = next;
    end = Math.min(n, start + windowSize);
  }
  return spans;
}
