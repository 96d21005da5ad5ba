/**
 * Windows of a transcript: the slices of turns an LLM is shown, as the original Go `fork`
 * package cuts them (`docs/specs/windows.md`). Pure; a window is a new array of the input's turn
 * objects, in input order.
 */

/** A turn of a conversation: who spoke (`user`, `assistant`, `tool`, `system`, …) and what. */
export interface Turn {
  role: string;
  content: string;
}

/** Fallbacks for non-positive sizes, as in the original. */
const DEFAULT_WINDOW_TURNS = 10;
const DEFAULT_USER_STEP = 5;

/**
 * Consecutive, non-overlapping windows of `windowTurns` turns (of any role; the last holds the
 * rest). `windowTurns <= 0` falls back to 10; a non-integer throws a RangeError.
 */
export function splitWindows<T extends Turn>(turns: readonly T[], windowTurns: number): T[][] {
  const size = sizeOr(windowTurns, "windowTurns", DEFAULT_WINDOW_TURNS);
  const windows: T[][] = [];
  for (let start = 0; start < turns.length; start += size) {
    windows.push(turns.slice(start, start + size));
  }
  return windows;
}

/**
 * Growing windows from the first turn: one ending right after every `userStep`-th user turn (the
 * reply to that turn falls into the next window), then the whole transcript unless the last one
 * already is it. Each window is a strict prefix of the next, so a provider that caches prompt
 * prefixes reuses the shared part. Fewer than `userStep` user turns give one window of it all.
 * `maxWindows > 0` keeps the last (longest) windows. `userStep <= 0` falls back to 5.
 */
export function splitPrefixWindows<T extends Turn>(
  turns: readonly T[],
  userStep: number,
  maxWindows: number,
): T[][] {
  const step = sizeOr(userStep, "userStep", DEFAULT_USER_STEP);
  const cap = capOf(maxWindows);
  if (turns.length === 0) return [];
  const windows = boundaries(turns, step).map((end) => turns.slice(0, end));
  const last = windows.at(-1);
  if (last === undefined || !sameTurns(last, turns)) windows.push(turns.slice());
  return keepLast(windows, cap);
}

/**
 * Consecutive, non-overlapping windows, each ending right after a `userStep`-th user turn, and
 * the turns after the last such boundary as a final window. Joined, they are the input.
 * `maxWindows > 0` keeps the last windows (dropping the earliest part of the transcript).
 * `userStep <= 0` falls back to 5.
 */
export function splitNonPrefixWindows<T extends Turn>(
  turns: readonly T[],
  userStep: number,
  maxWindows: number,
): T[][] {
  const step = sizeOr(userStep, "userStep", DEFAULT_USER_STEP);
  const cap = capOf(maxWindows);
  const windows: T[][] = [];
  let start = 0;
  for (const end of boundaries(turns, step)) {
    windows.push(turns.slice(start, end));
    start = end;
  }
  if (start < turns.length) windows.push(turns.slice(start));
  return keepLast(windows, cap);
}

/** `value` when positive, `fallback` when not; a RangeError naming `name` when not an integer. */
function sizeOr(value: number, name: string, fallback: number): number {
  if (!Number.isInteger(value)) throw new RangeError(`${name} must be an integer (got ${value})`);
  return value > 0 ? value : fallback;
}

/** The number of windows to keep, or 0 for all; a RangeError when not an integer. */
function capOf(maxWindows: number): number {
  if (!Number.isInteger(maxWindows)) {
    throw new RangeError(`maxWindows must be an integer (got ${maxWindows})`);
  }
  return Math.max(0, maxWindows);
}

/** The end (exclusive) of each window: right after every `step`-th turn whose role is `user`. */
function boundaries(turns: readonly Turn[], step: number): number[] {
  const ends: number[] = [];
  let users = 0;
  turns.forEach((turn, index) => {
    if (turn.role === "user" && ++users % step === 0) ends.push(index + 1);
  });
  return ends;
}

/** The original's `sameWindow`: same length, and each turn the same role and content. */
function sameTurns(a: readonly Turn[], b: readonly Turn[]): boolean {
  return (
    a.length === b.length && a.every((t, i) => t.role === b[i].role && t.content === b[i].content)
  );
}

function keepLast<T>(windows: T[][], cap: number): T[][] {
  return cap > 0 && windows.length > cap ? windows.slice(-cap) : windows;
}
