/**
 * What the analyzer does when the provider says a window's prompt is longer than the model's
 * context: the same prompt can never succeed, so instead of failing the segment (and retrying it
 * for ever) the window's turns are asked in two halves, each split again while it is too long.
 */
import { isContextLengthError } from "./errors.js";
import type { AuthoredTurn } from "./prompts/render.js";
import type { Window } from "./routes.js";

/**
 * `ask(window)`, or, when the model's context cannot hold it, `ask` of each half (the second
 * half's offset moved by the first's length), in order, joined by `join`. A single turn that
 * does not fit fails with the provider's error.
 */
export async function splitWhileTooLong<R>(
  window: Window<AuthoredTurn>,
  ask: (window: Window<AuthoredTurn>, whole: boolean) => Promise<R>,
  join: (parts: R[]) => R,
  whole = true,
): Promise<R> {
  try {
    return await ask(window, whole);
  } catch (error) {
    if (!isContextLengthError(error) || window.turns.length < 2) throw error;
    const mid = Math.ceil(window.turns.length / 2);
    const first = { turns: window.turns.slice(0, mid), offset: window.offset };
    const second = { turns: window.turns.slice(mid), offset: window.offset + mid };
    return join([
      await splitWhileTooLong(first, ask, join, false),
      await splitWhileTooLong(second, ask, join, false),
    ]);
  }
}
