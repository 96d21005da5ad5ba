/**
 * Chat input as the commands take it: a chat platform's export (Slack ZIP or folder,
 * DiscordChatExporter, Telegram, Mattermost, WhatsApp; lib/intake/exports) or JSON lines of chat
 * messages (./read-messages.ts), told apart by the input itself, so that `run --input` and
 * `segment` take either; and what an export read reports, said as the commands say it.
 */

import { stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import { formatDuration } from "convoseg/duration";
import {
  type ChannelSummary,
  detectFormat,
  ExportError,
  type ExportFormat,
  ExportInputError,
  type ExportProgress,
  type ExportReport,
  ExportTimezoneError,
  readExports,
  toChatMessage,
} from "convoseg/exports";
import { ingestionProblem } from "convoseg/ingest";
import type { ChatMessage } from "convoseg/messages";
import { columns, escapeControls, formatCount, formatProblem, plural } from "./format.js";
import type { CommandIO } from "./io.js";
import { Progress } from "./progress.js";
import { readMessages } from "./read-messages.js";

/**
 * The export format of `source`, or undefined when it is JSON lines of chat messages (standard
 * input, a file no export reader recognises, or a path that is not there, which the JSON-lines
 * reader then reports as it always did). A folder is always an export: it is refused, naming
 * what was looked for, when none is recognised.
 */
async function exportFormatOf(source: string): Promise<ExportFormat | undefined> {
  if (source === "-") return undefined;
  const info = await stat(source).catch(() => undefined);
  if (info === undefined) return undefined;
  if (info.isDirectory()) return detectFormat(source);
  try {
    return await detectFormat(source);
  } catch (error) {
    // A ZIP that is no Slack export is no chat JSON either: say what the export reader found.
    if (error instanceof ExportInputError && !/\bZIP\b/.test(error.message)) return undefined;
    throw error;
  }
}

/** `--timezone`, checked as the export readers check it. */
export function timezoneOption(zone: string | undefined): string | undefined {
  if (zone === undefined) return undefined;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
  } catch {
    throw new Error(`--${new ExportTimezoneError(zone).message}`);
  }
  return zone;
}

/** A message of the input that cannot be taken: where (in words), the field and why. */
interface InputRefusal {
  /** For sorting: the line (JSON lines), or the message's place in the export's order. */
  order: number;
  /** `line 12: text: …` or `channel "C01" message "1704880800.000100": text: …`, escaped. */
  text: string;
}

/** The messages of an input, as `segment` and `run` take them. */
export interface InputRead {
  /** The format read: an export's, or `jsonl` for chat lines. */
  format: ExportFormat | "jsonl";
  /** Valid messages, in input order (an export's: channel by channel, oldest first). */
  messages: ChatMessage[];
  /** Where a message came from, in words: `line 12`, or its channel and id for an export. */
  placeOf(message: ChatMessage): string;
  /** The line each message of chat lines came from (none for an export). */
  lines?: ReadonlyMap<ChatMessage, number>;
  /** Lines of chat input that were refused (an export's reader skips instead: see `notes`). */
  refused: InputRefusal[];
  /** What an export's reader skipped, merged and assumed, one line each, for standard error. */
  notes: string[];
}

export interface ReadInputOptions {
  /** The channel of chat lines that name none (`--channel`); an export names its own. */
  defaultChannel?: string;
  /** The zone of an export's zone-less times (default: the machine's). */
  timezone?: string;
}

/**
 * Reads `source` (a path, or `-` for standard input) as an export when it is one, else as JSON
 * lines of chat messages. Progress goes to `progress`.
 *
 * @throws ExportError for an export that cannot be read (naming the file, entry and field), or
 * the JSON-lines reader's error for a file it cannot open.
 */
async function readInput(
  source: string,
  progress: Progress,
  stdin: Readable,
  options: ReadInputOptions = {},
): Promise<InputRead> {
  const format = await exportFormatOf(source);
  if (format === undefined) {
    const read = await readMessages(source, progress, stdin, {
      defaultChannel: options.defaultChannel,
    });
    const [first] = read.problems;
    if (read.messages.length === 0 && first?.field === "json") {
      // A file that is not chat at all (a README, a CSV): one line, not one per line.
      throw new Error(
        `it is not chat: line ${first.line} is ${first.problem}, and no line is a chat message; give JSON lines of chat messages (docs/commands.md#the-chat-input-format) or an export of Slack, Discord, Telegram, Mattermost or WhatsApp, or an IRC log (docs/exports.md)`,
      );
    }
    const lines = new Map(read.messages.map((entry) => [entry.message, entry.line]));
    return {
      format: "jsonl",
      messages: read.messages.map((entry) => entry.message),
      placeOf: (message) => `line ${lines.get(message)}`,
      lines,
      refused: read.problems.map((p) => ({ order: p.line, text: formatProblem(p) })),
      notes: [],
    };
  }
  const reading = readExports([{ path: source, format }], {
    timezone: options.timezone,
    onProgress: (p) => progress.update(() => readingStatus(p)),
  });
  const messages: ChatMessage[] = [];
  for await (const batch of reading.batches()) {
    for (const message of batch) messages.push(toChatMessage(message));
  }
  return {
    format,
    messages,
    placeOf: messagePlace,
    refused: [],
    notes: reportLines(reading.report),
  };
}

/** An exported message's place: its channel and id (an export has no lines to name). */
export const messagePlace = (message: { channel: string; id: string }): string =>
  `channel ${JSON.stringify(message.channel)} message ${JSON.stringify(message.id)}`;

/** The status line of an export being read: never a message's text. */
export function readingStatus(p: ExportProgress): string {
  const files = p.filesTotal === undefined ? "" : ` (file ${p.filesDone} of ${p.filesTotal})`;
  return `reading ${p.format} export ${p.input}${files}: ${plural(p.messages, "message")}`;
}

/**
 * How far through its files an export's reading is, and about how long the rest takes at the
 * pace so far (`elapsedMs` since it began): `file 40 of 300, about 2m left`. Empty while nothing
 * says (a one-file export, no file done yet).
 */
export function readingEta(p: ExportProgress | undefined, elapsedMs: number): string {
  if (p?.filesTotal === undefined || p.filesTotal < 2 || p.filesDone < 1) return "";
  const left = p.filesTotal - p.filesDone;
  const eta = left <= 0 ? "" : `, about ${formatDuration((elapsedMs / p.filesDone) * left)} left`;
  return `file ${p.filesDone} of ${p.filesTotal}${eta}`;
}

/**
 * What an export read left out and assumed, one line each: skipped entries per file and reason
 * ({@link skippedLines}), then the rest ({@link readNotes}). Escaped for a terminal.
 */
export function reportLines(report: ExportReport, options: { timezone?: boolean } = {}): string[] {
  return [...skippedLines(report), ...readNotes(report, options)];
}

/** Per file and reason, the entries left out, and where the first one is. */
export function skippedLines(report: ExportReport): string[] {
  const lines: string[] = [];
  for (const file of report.files) {
    for (const [reason, n] of Object.entries(file.skipped)) {
      const first = report.skippedItems.find(
        (item) => item.file === file.file && `${item.field}: ${item.reason}` === reason,
      );
      const at = first?.at.startsWith("[") ? `entry ${first.at}` : first?.at;
      const where = at === undefined ? "" : ` (${n === 1 ? "at" : "the first at"} ${at})`;
      lines.push(`${file.file}: skipped ${formatCount(n)}: ${reason}${where}`);
    }
  }
  return lines.map(escapeControls);
}

/**
 * Repeats merged, conflicting repeats (the first kept), the readers' notes, and (unless
 * `timezone` is false) the zone that zone-less times were read in.
 */
export function readNotes(report: ExportReport, options: { timezone?: boolean } = {}): string[] {
  const lines: string[] = [];
  if (report.duplicates > 0) {
    lines.push(
      `${plural(report.duplicates, "message")} given twice (same id and content: overlapping files) read once`,
    );
  }
  for (const { channel, id, fields } of report.conflicts) {
    lines.push(
      `${messagePlace({ channel, id })}: given again with another ${fields.join(" and ")}: the first one read is kept`,
    );
  }
  for (const note of report.notes) lines.push(`note: ${note}`);
  if (options.timezone !== false && report.zonelessTimes > 0) {
    lines.push(
      `${plural(report.zonelessTimes, "time")} without a zone read in ${report.timezone} (--timezone ZONE to say another)`,
    );
  }
  return lines.map(escapeControls);
}

/**
 * The line a command says an unreadable input in: an export's error names its file, entry and
 * field itself; another says which input it is about.
 */
function inputFailure(command: string, source: string, error: unknown): string {
  const message = escapeControls((error as Error).message);
  return error instanceof ExportError
    ? `${command}: ${message}\n`
    : `${command}: cannot read ${source}: ${message}\n`;
}

/**
 * `source` read as {@link readInput}, its reading shown on `progress`, then its notes said on
 * standard error (with `channelNote`, also a `--channel` an export leaves unused); undefined, the
 * failure said, when it cannot be read.
 */
async function readNoted(
  command: string,
  source: string,
  progress: Progress,
  io: CommandIO,
  options: ReadInputOptions,
  channelNote = false,
): Promise<InputRead | undefined> {
  let read: InputRead;
  try {
    read = await readInput(source, progress, io.stdin, options);
  } catch (error) {
    io.stderr.write(inputFailure(command, source, error));
    return undefined;
  } finally {
    progress.finish();
  }
  if (channelNote && read.format !== "jsonl" && options.defaultChannel !== undefined) {
    io.stderr.write(
      `${command}: --channel left unused: a ${read.format} export names its channels\n`,
    );
  }
  for (const note of read.notes) io.stderr.write(`${command}: ${note}\n`);
  return read;
}

/**
 * The chat of `source` for a command that only reads it (`segment`, `disentangle`), its reading
 * shown on `progress`: its notes and refused lines go to standard error; undefined, with the
 * reason said, when it cannot be read or a line is refused without `skipInvalid` (then nothing is
 * `done`, as the last line says). `channelNote`: say when an export leaves `--channel` unused.
 */
export async function readChatInput(
  command: string,
  source: string,
  progress: Progress,
  io: CommandIO,
  options: ReadInputOptions & { skipInvalid: boolean; done: string; channelNote?: boolean },
): Promise<InputRead | undefined> {
  const read = await readNoted(command, source, progress, io, options, options.channelNote);
  if (read === undefined) return undefined;
  for (const problem of read.refused) {
    io.stderr.write(`${options.skipInvalid ? "skipped " : ""}${problem.text}\n`);
  }
  if (read.refused.length > 0 && !options.skipInvalid) {
    io.stderr.write(
      `${command}: ${plural(read.refused.length, "invalid line")}; nothing was ${options.done} (fix them, or pass --skip-invalid)\n`,
    );
    return undefined;
  }
  return read;
}

/** What `run --input` ingests: the input's valid messages, and how many `--skip-invalid` left out. */
export interface LoadedInput {
  messages: ChatMessage[];
  placeOf(message: ChatMessage): string;
  skipped: number;
}

/**
 * The messages of `source` for `command` (`run`): read as {@link readInput}, with the lines
 * ingestion would refuse reported too. Problems go to standard error; with any and without
 * `skipInvalid`, nothing is loaded (undefined), as when the input cannot be read.
 */
export async function loadInput(
  command: string,
  source: string,
  options: ReadInputOptions & { skipInvalid: boolean },
  io: CommandIO,
): Promise<LoadedInput | undefined> {
  const read = await readNoted(command, source, new Progress(io.stderr), io, options, true);
  if (read === undefined) return undefined;
  const refused = [...read.refused];
  const kept = read.messages.filter((message, index) => {
    const problem = ingestionProblem(message);
    if (problem === undefined) return true;
    refused.push({
      order: read.lines?.get(message) ?? index + 1,
      text: escapeControls(`${read.placeOf(message)}: ${problem.field}: ${problem.problem}`),
    });
    return false;
  });
  refused.sort((a, b) => a.order - b.order);
  for (const { text } of refused)
    io.stderr.write(`${options.skipInvalid ? "skipped " : ""}${text}\n`);
  if (refused.length > 0 && !options.skipInvalid) {
    const what =
      read.format === "jsonl"
        ? plural(refused.length, "invalid line")
        : `${plural(refused.length, "message")} ingestion refuses`;
    io.stderr.write(`${command}: ${what}; nothing was run (fix them, or pass --skip-invalid)\n`);
    return undefined;
  }
  return { messages: kept, placeOf: read.placeOf, skipped: refused.length };
}

/** An input of `import-chat`, with its format (given, or detected). */
export interface ImportedInput {
  path: string;
  format: ExportFormat;
}

/** The most channels a table prints; `--json` lists them all. */
const TABLE_CHANNELS = 20;

/** Each channel read, one row: id, name, platform, messages, first and last time (to the minute). */
export function channelTable(channels: readonly ChannelSummary[]): string[] {
  const minute = (ts: string) => `${ts.slice(0, 10)} ${ts.slice(11, 16)}Z`;
  const rows = channels
    .slice(0, TABLE_CHANNELS)
    .map((c) => [
      c.channel,
      c.channelName,
      c.platform ?? "",
      formatCount(c.messages),
      minute(c.first),
      minute(c.last),
    ]);
  const header = ["channel", "name", "platform", "messages", "first", "last"];
  const more = channels.length - TABLE_CHANNELS;
  return [
    ...columns([header, ...rows], [3]).map((line) => `  ${line}`),
    ...(more > 0 ? [`  … and ${plural(more, "more channel")} (--json lists every one)`] : []),
  ].map(escapeControls);
}

/**
 * What an export read, as `import-chat --json` says it (docs/commands.md#import-chat): the inputs,
 * the zone used, counts and dates per channel and overall, what was skipped by reason and per
 * file, the first skipped entries, repeats merged and conflicting ones, the reader's notes.
 */
export function readJson(inputs: readonly ImportedInput[], report: ExportReport) {
  const skipped: Record<string, number> = {};
  for (const file of report.files) {
    for (const [reason, n] of Object.entries(file.skipped))
      skipped[reason] = (skipped[reason] ?? 0) + n;
  }
  const { channels } = report;
  const firsts = channels.map((c) => c.first).sort();
  const lasts = channels.map((c) => c.last).sort();
  return {
    inputs,
    timezone: report.timezone,
    zonelessTimes: report.zonelessTimes,
    messages: channels.reduce((sum, c) => sum + c.messages, 0),
    first: firsts[0] ?? null,
    last: lasts.at(-1) ?? null,
    channels,
    skipped,
    files: report.files,
    skippedItems: report.skippedItems,
    duplicates: report.duplicates,
    conflicts: report.conflicts,
    notes: report.notes,
  };
}
