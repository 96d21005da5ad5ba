/**
 * How a window of turns is shown to the model, and how the model's turn numbers map back to the
 * turns: the original's `summarize`, `renderIndices` and `mapTurnRange`, with the render replaced
 * (docs/specs/windows.md, "This port" under summarize): chat text is hostile, so a turn's author
 * and text are JSON strings and can never read as a turn, a marker or an instruction line.
 */
import type { Turn } from "../../windows/index.js";

const LABELS: Record<string, string> = { user: "USER", assistant: "ASSISTANT", tool: "TOOL" };

/**
 * A turn as the analyzer renders it: its author, when the platform says, kept apart from its
 * text; its message's id, and the id of the message it answers (a reply, or a thread reply's
 * root), so that the render can say which turn it answers.
 */
export interface AuthoredTurn extends Turn {
  author?: string;
  id?: string;
  replyTo?: string;
}

/**
 * Whether a turn is rendered: user and assistant turns with text, and tool turns only in the full
 * render (`includeTool`); other roles (system) never. Empty text uses no number.
 */
function rendered(turn: Turn, includeTool: boolean): boolean {
  if (turn.content.trim() === "") return false;
  return turn.role === "user" || turn.role === "assistant" || (includeTool && turn.role === "tool");
}

/**
 * Characters JSON leaves as they are but that break a line for some readers (NEL, the Unicode
 * line and paragraph separators), other C1 controls and DEL, and the bidi controls that reorder
 * what a person reading the prompt sees: written as `\uXXXX` escapes, still valid JSON.
 */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` as a JSON string on one line: quotes, backslashes and every control character escaped,
 * so that nothing in it can end the string or start a line. Deterministic: the same text always
 * gives the same string (a prefix route's shared prompt prefix stays identical).
 */
export function promptString(text: string): string {
  return JSON.stringify(text).replace(
    UNSAFE_IN_JSON,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * The numbered lines `Turn N [USER] "author": "text"` (`Turn N [ROLE]: "text"` for a turn without
 * an author), numbered from 1 over the rendered turns only; the whole window, one line per turn.
 * A reply says whom it answers by turn number, `Turn 3 [USER] "bo" (reply to Turn 1): "text"`,
 * or `(reply to an earlier message)` when that message is not a turn rendered before it in this
 * window (an earlier window's, a hidden system line's). Only the number is structure: the ids
 * never reach the prompt, so chat text still cannot write a line of its own. A thread's segment
 * shows its root first as `context` ({@link contextLine}), and a reply to it says so.
 */
export function renderTurns(
  turns: readonly AuthoredTurn[],
  includeTool: boolean,
  context?: AuthoredTurn,
): string {
  const lines: string[] = [];
  const root = contextLine(context);
  if (root !== undefined) lines.push(root);
  const numbers = new Map<string, number>();
  let number = 0;
  for (const turn of turns) {
    if (!rendered(turn, includeTool)) continue;
    number++;
    const author = turn.author ? ` ${promptString(turn.author)}` : "";
    const text = promptString(turn.content.trim());
    const note = replyNote(turn, numbers, root === undefined ? undefined : context?.id);
    lines.push(`Turn ${number} [${LABELS[turn.role]}]${author}${note}: ${text}`);
    if (turn.id !== undefined && !numbers.has(turn.id)) numbers.set(turn.id, number);
  }
  return lines.join("\n");
}

/**
 * The line of a thread's root, shown before the turns of a thread's segment as what they answer:
 * `Context [THREAD ROOT] "ana": "text"`, no turn number (it is not one of the segment's messages,
 * so no candidate can cite it). Its author and text are hostile like any turn's: JSON strings.
 * Undefined when there is no root, or it has no text.
 */
function contextLine(context: AuthoredTurn | undefined): string | undefined {
  if (context === undefined || context.content.trim() === "") return undefined;
  const author = context.author ? ` ${promptString(context.author)}` : "";
  return `Context [THREAD ROOT]${author}: ${promptString(context.content.trim())}`;
}

/** What the line of a reply says of the turn it answers; nothing for a turn that answers none. */
function replyNote(
  turn: AuthoredTurn,
  numbers: ReadonlyMap<string, number>,
  rootId: string | undefined,
): string {
  if (turn.replyTo === undefined || turn.replyTo === turn.id) return "";
  const answered = numbers.get(turn.replyTo);
  if (answered !== undefined) return ` (reply to Turn ${answered})`;
  return rootId !== undefined && turn.replyTo === rootId
    ? " (reply to the thread root)"
    : " (reply to an earlier message)";
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
