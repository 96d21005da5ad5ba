/**
 * The routes of the analyzer and how each cuts a transcript into windows: the cut itself
 * (`lib/knowledge/windows`), where each window starts in the transcript, and how many windows a route asks
 * about at most (what the deployment sizes the extraction function's timeout from).
 */
import {
  plainWindowCount,
  type ReplyTarget,
  slidingWindowSpans,
  type Turn,
} from "../windows/index.js";

/**
 * How a transcript is cut into what the model sees:
 * - `prefix`: growing prefix windows every `prefixStep` user turns, tool output included;
 * - `non_prefix`: non-overlapping windows every `prefixStep` user turns;
 * - `full`: the whole transcript at once; `full2`: the same, then a pass for what was missed;
 * - `sliding`: windows of `windowSize` turns overlapping by `overlap`.
 * All but `prefix` show user and assistant turns only.
 */
export type Route = "prefix" | "non_prefix" | "full" | "full2" | "sliding";

export const ROUTES: readonly Route[] = ["prefix", "non_prefix", "full", "full2", "sliding"];

/** What decides how many windows a route cuts: the transcript's length and the window settings. */
export interface WindowSizing {
  /** Turns of the transcript (a segment has one per message). */
  turns: number;
  windowSize: number;
  overlap: number;
  prefixStep: number;
  maxWindows: number;
}

/**
 * The most windows (prompts) `route` asks the model about for a transcript of `sizing.turns`
 * turns, whatever their roles: as many as the splitters cut when every turn is a user turn, the
 * most there can be. `sliding`: ceil((turns - overlap) / (windowSize - overlap)), at least one
 * (replies never add windows: the analyzer pulls a window back for a reply only within this count);
 * `prefix` and `non_prefix`: one per `prefixStep` turns, the last holding the rest, at most
 * `maxWindows`; `full` one; `full2` two passes over the whole. No turns, no windows. Sizes as
 * the analyzer takes them: positive (the deployment's reader checks them).
 */
export function windowCount(route: Route, sizing: WindowSizing): number {
  const { turns, windowSize, overlap, prefixStep, maxWindows } = sizing;
  if (turns <= 0) return 0;
  switch (route) {
    case "sliding":
      return Math.max(1, Math.ceil((turns - overlap) / (windowSize - overlap)));
    case "prefix":
    case "non_prefix":
      return Math.min(maxWindows, Math.ceil(turns / prefixStep));
    case "full":
      return 1;
    case "full2":
      return 2;
  }
}

/** A window of the transcript and where it starts in it. */
export interface Window<T extends Turn = Turn> {
  turns: readonly T[];
  offset: number;
}

/** Non-prefix windows join to the end of the transcript: each starts where the rest begins. */
export function withSuffixOffsets<T extends Turn>(length: number, windows: T[][]): Window<T>[] {
  let end = length;
  const placed: Window<T>[] = [];
  for (let i = windows.length - 1; i >= 0; i--) {
    end -= windows[i].length;
    placed.unshift({ turns: windows[i], offset: end });
  }
  return placed;
}

/**
 * The `sliding` route's windows, each with its start as its offset. A reply's window holds the
 * turn it answers when that is within the last `windowSize` turns, as far as the plain number of
 * windows allows: that is what the deployment sizes its timeout from, and a chat full of replies
 * must not multiply the calls.
 */
export function replyAwareSlidingWindows<T extends Turn & LinkedTurn>(
  turns: readonly T[],
  windowSize: number,
  overlap: number,
): Window<T>[] {
  const { length } = turns;
  const budget = plainWindowCount(length, windowSize, overlap);
  return slidingWindowSpans(length, windowSize, overlap, replyTargets(turns), budget).map(
    ([start, end]) => ({ turns: turns.slice(start, end), offset: start }),
  );
}

/** What a turn needs for its reply link to be read: its id, and the id it answers. */
export interface LinkedTurn {
  id?: string;
  replyTo?: string;
}

/**
 * Each turn's reply target as an index into `turns`: the earlier turn whose id its `replyTo`
 * names (the first turn of that id). A target outside the transcript, at or after the reply, or
 * the turn itself is no link; undefined when no turn has a link, so windows are the plain ones.
 */
export function replyTargets(turns: readonly LinkedTurn[]): ReplyTarget | undefined {
  if (!turns.some((turn) => turn.replyTo !== undefined)) return undefined;
  const indexOf = new Map<string, number>();
  turns.forEach((turn, index) => {
    if (turn.id !== undefined && !indexOf.has(turn.id)) indexOf.set(turn.id, index);
  });
  return (index) => {
    const answers = turns[index]?.replyTo;
    const target = answers === undefined ? undefined : indexOf.get(answers);
    return target !== undefined && target < index ? target : undefined;
  };
}

/**
 * `value` when positive, else `fallback` (the original's defaults); a RangeError naming `name`
 * for a value that is not a finite number (or, with `integer`, not an integer).
 */
export function positiveOr(
  name: string,
  value: number | undefined,
  fallback: number,
  integer: boolean,
): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    throw new RangeError(`${name} must be ${integer ? "an integer" : "a number"} (got ${value})`);
  }
  return value > 0 ? value : fallback;
}
