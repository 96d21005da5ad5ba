/**
 * How a window of turns is shown to the model, and how the model's turn numbers map back to the
 * turns: the original's `summarize`, `renderIndices` and `mapTurnRange`.
 */
import type { Turn } from "../windows/index.js";

const LABELS: Record<string, string> = { user: "USER", assistant: "ASSISTANT", tool: "TOOL" };

/**
 * Whether a turn is rendered: user and assistant turns with text, and tool turns only in the full
 * render (`includeTool`); other roles (system) never. Empty text uses no number.
 */
function rendered(turn: Turn, includeTool: boolean): boolean {
  if (turn.content.trim() === "") return false;
  return turn.role === "user" || turn.role === "assistant" || (includeTool && turn.role === "tool");
}

/** The lines `Turn N [USER]: text`, numbered from 1 over the rendered turns only; whole window. */
export function renderTurns(turns: readonly Turn[], includeTool: boolean): string {
  const lines: string[] = [];
  for (const turn of turns) {
    if (!rendered(turn, includeTool)) continue;
    lines.push(`Turn ${lines.length + 1} [${LABELS[turn.role]}]: ${turn.content.trim()}`);
  }
  return lines.join("\n");
}

/** The window-local indexes of exactly the turns `renderTurns` renders, in order. */
export function renderIndices(turns: readonly Turn[], includeTool: boolean): number[] {
  const indexes: number[] = [];
  turns.forEach((turn, index) => {
    if (rendered(turn, includeTool)) indexes.push(index);
  });
  return indexes;
}

/**
 * The turns (indexes into the window, plus `offset` for where the window starts in the
 * transcript) that a model's 1-based, inclusive range of rendered turn numbers covers. Null when
 * the model gave none, or `[0, 0]`, or the window rendered nothing, or the start lies past the
 * rendered turns once clamped; otherwise the start is clamped up to 1, the end into `[1, n]` and
 * up to the start (the original's fixes for ranges that crashed it).
 */
export function mapTurnRange(
  range: readonly [number, number] | null,
  indexes: readonly number[],
  offset: number,
): [number, number] | null {
  if (range === null || indexes.length === 0 || (range[0] === 0 && range[1] === 0)) return null;
  const start = Math.max(1, range[0]);
  let end = Math.min(indexes.length, Math.max(1, range[1]));
  if (end < start) end = start;
  if (start > indexes.length) return null;
  return [offset + indexes[start - 1], offset + indexes[end - 1]];
}
