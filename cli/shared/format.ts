/**
 * Formatting more than one command writes the same way: input problems, chat text made safe for
 * a terminal, counts and times, a channel's topics, the `--min-items` warning.
 */
import { channelLabel } from "convoseg/identity";
import type { Topic } from "convoseg/knowledge/read";
import type { CommandIO } from "./io.js";
import type { InputProblem } from "./read-messages.js";

/**
 * What must not reach a terminal raw: controls (C0, C1, DEL: escape sequences, carriage
 * returns), format characters (bidi overrides and isolates such as U+202E, zero-width spaces,
 * the BOM) and the line and paragraph separators. Only the zero-width non-joiner and joiner are
 * left, which emoji and several scripts need to be read as written.
 */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
const JOINERS = new Set(["\u200c", "\u200d"]);

/** One character as an escape: `\u001b`, `\u202e`, or beyond the BMP `\u{e0001}`. */
function escaped(c: string): string {
  if (JOINERS.has(c)) return c;
  const code = c.codePointAt(0) as number;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** Controls, bidi and other invisible format characters as `\uXXXX` escapes (newlines too). */
export function escapeControls(text: string): string {
  return text.replace(UNSAFE, escaped);
}

/** The progress line's own redraw: back to the line's start, and clear it. */
const REDRAW = "\r\x1b[2K";

/**
 * `text` as every command's output reaches the terminal: as {@link escapeControls}, but keeping
 * newlines, tabs and the progress line's redraw. The last guard, at the streams, for data a
 * command writes without escaping it itself; JSON output stays valid (a control or bidi
 * character can only be inside a string there, where `\u202e` means the same).
 */
export function terminalSafe(text: string): string {
  return text
    .split(REDRAW)
    .map((part) => part.replace(UNSAFE, (c) => (c === "\n" || c === "\t" ? c : jsonEscaped(c))))
    .join(REDRAW);
}

/**
 * One character as a JSON escape: beyond the BMP as its surrogate pair (`\udb40\udc20`), since
 * `\u{e0020}` is no JSON escape and would break (or change) a command's JSON output.
 */
function jsonEscaped(c: string): string {
  if (JOINERS.has(c)) return c;
  return c
    .split("")
    .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`)
    .join("");
}

/**
 * `line N: field: problem`, with control characters (an escape sequence in a broken line, say)
 * written as `\u001b` so that nothing from the input reaches the terminal raw.
 */
export const formatProblem = (p: InputProblem): string =>
  escapeControls(`line ${p.line}: ${p.field}: ${p.problem}`);

/** A count with thousands separators: `12,345`. */
export const formatCount = (n: number): string => n.toLocaleString("en-US");

/** A time to the minute, UTC: `2025-01-06T09:12Z`. */
export const isoMinute = (ms: number): string => `${new Date(ms).toISOString().slice(0, 16)}Z`;

/**
 * Rows as aligned columns two spaces apart, each line without trailing blanks: the columns
 * `rightAligned` names (numbers) padded on the left, the others on the right.
 */
export function columns(rows: readonly string[][], rightAligned: readonly number[] = []): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  return rows.map((row) =>
    row
      .map((cell, i) =>
        rightAligned.includes(i) ? cell.padStart(widths[i]) : cell.padEnd(widths[i]),
      )
      .join("  ")
      .trimEnd(),
  );
}

/** `1 segment`, `2 segments`, `1,200 messages`: a count and its noun (plural by an `s`). */
export const plural = (n: number, noun: string): string =>
  `${formatCount(n)} ${noun}${n === 1 ? "" : "s"}`;

/**
 * A span of time in UTC, as precise as `unit` and no more than it needs: to the `day`
 * (`2018-05-29`, `2018-05-29 to 2018-05-31`) or the `minute` (`2018-05-30 09:12–11:40`,
 * `2018-05-29 21:20 to 2018-05-31 09:05`).
 */
export function formatSpan(first: number, last: number, unit: "day" | "minute"): string {
  const at = (ms: number) => new Date(ms).toISOString();
  const [firstDay, lastDay] = [at(first).slice(0, 10), at(last).slice(0, 10)];
  const [firstTime, lastTime] = [at(first).slice(11, 16), at(last).slice(11, 16)];
  if (unit === "day") return firstDay === lastDay ? firstDay : `${firstDay} to ${lastDay}`;
  if (firstDay !== lastDay) return `${firstDay} ${firstTime} to ${lastDay} ${lastTime}`;
  return firstTime === lastTime
    ? `${firstDay} ${firstTime}`
    : `${firstDay} ${firstTime}–${lastTime}`;
}

/**
 * `text` as one word for bash, zsh and POSIX shells alike when it is plain (`general`, `'#help'`),
 * and as `$'…'` with `\uXXXX` escapes when it holds characters a terminal would not show (the
 * only way to type a zero-width space or a bidi override).
 */
export function shellArg(text: string): string {
  if (/^[\w@%+=:,./-]+$/.test(text)) return text;
  const escaped = escapeControls(text);
  if (escaped === text) return `'${text.replace(/'/g, `'\\''`)}'`;
  const quoted = escapeControls(text.replace(/\\/g, "\\\\").replace(/'/g, "\\'"));
  // Bash writes a character beyond the BMP as \UXXXXXXXX.
  return `$'${quoted.replace(/\\u\{([0-9a-f]+)\}/g, (_, hex: string) => `\\U${hex.padStart(8, "0")}`)}'`;
}

/**
 * A channel as a listing heads it: `general (C0GENERAL)` when its messages name it, the name
 * people know and the id commands take; else its id, quoted (`"desk"`).
 */
export function channelHeading(channel: string, name?: string): string {
  return escapeControls(name === undefined ? JSON.stringify(channel) : channelLabel(channel, name));
}

/** The text listing of a channel's topics: a line per topic, then its evidence indented. */
export function formatTopics(
  channel: string,
  topics: readonly Topic[],
  displayName?: string,
): string {
  const name = channelHeading(channel, displayName);
  if (topics.length === 0) return `${name}: no topics extracted yet`;
  const lines = [`${name}: ${plural(topics.length, "topic")}, most supported first`];
  for (const topic of topics) {
    const tags = topic.tags.length === 0 ? "" : `, tags ${topic.tags.join(", ")}`;
    lines.push(
      escapeControls(
        `- ${topic.topic}: ${plural(topic.segments, "segment")}, ${isoMinute(topic.firstSeen)} to ${isoMinute(topic.lastSeen)}, confidence ${topic.bestConfidence.toFixed(2)}${tags}`,
      ),
    );
    // Aliases are the chat's words: escaped like the rest, one line, after the topic.
    if (topic.aliases.length > 0)
      lines.push(escapeControls(`    also: ${topic.aliases.join(", ")}`));
    if (topic.bestReason !== "") lines.push(escapeControls(`    ${topic.bestReason}`));
    for (const evidence of topic.evidence) {
      const range =
        evidence.messageIds === null
          ? "the whole segment"
          : `messages ${evidence.messageIds[0]} to ${evidence.messageIds[1]}`;
      lines.push(
        escapeControls(
          `    segment ${evidence.segmentId}${evidence.late ? " (late)" : ""}: ${range}${topic.aliases.length > 0 ? ` (${evidence.topic})` : ""}`,
        ),
      );
    }
  }
  return lines.join("\n");
}

/**
 * Warns when no carved segment can reach `minItems` because `maxSize` caps it lower: then
 * (nearly) every message is dropped, which is almost never what was meant.
 */
export function warnIfMinItemsUnreachable(
  io: CommandIO,
  command: string,
  minItems: number,
  maxSize: number,
): void {
  if (minItems <= maxSize) return;
  io.stderr.write(
    `${command}: warning: --min-items ${minItems} is above --max-size ${maxSize}: no segment cut at the size cap can reach it, so nearly every message will be dropped\n`,
  );
}
