/**
 * Reading exports: each input (a path, its format given or detected) read by its format's
 * reader, the inputs merged in channel-major order, and repeated ids left out (a duplicate when
 * the content agrees, a conflict when it does not), with a report of what was read and skipped.
 */
import { stat } from "node:fs/promises";
import {
  conversationIdProblem,
  futureTimestampProblem,
  MAX_CONVERSATION_ID_BYTES,
  MAX_MESSAGE_ID_BYTES,
  messageIdProblem,
} from "../../base/identity/index.js";
import { type FileTally, ReadContext } from "./context.js";
import { detectFormat, formatFiles } from "./detect.js";
import { readDiscord } from "./discord.js";
import { ExportError, ExportInputError } from "./errors.js";
import { readIrc } from "./irc.js";
import { readMattermost } from "./mattermost.js";
import { compareExportMessages, differingFields } from "./order.js";
import { readSlack } from "./slack.js";
import { readTelegram } from "./telegram.js";
import { machineTimezone, wallClockIn } from "./timezone.js";
import {
  EXPORT_FORMATS,
  type ExportFormat,
  type ExportMessage,
  type ExportOptions,
  type ExportReport,
  MAX_REPORTED_ITEMS,
} from "./types.js";
import { readWhatsapp } from "./whatsapp.js";

/** An input: a path (format detected), or a path with its format (`auto` detects). */
export type ExportInput = string | { path: string; format?: ExportFormat | "auto" };

/** The messages of some exports, once: iterate it, then read its complete {@link report}. */
export interface ExportReading extends AsyncIterable<ExportMessage> {
  /** Filled in as messages are read; complete when the iteration has ended. */
  readonly report: ExportReport;
  /**
   * The same messages in batches of up to {@link BATCH_SIZE}, in the same order: what a writer
   * of many messages takes (one await per batch, not per message). Either this or the message
   * iteration, once.
   */
  batches(): AsyncIterable<ExportMessage[]>;
}

/** The most messages a batch of {@link ExportReading.batches} holds. */
export const BATCH_SIZE = 1000;

/** A format's reader: batches in channel-major order (each sorted, each after the last). */
type Reader = (input: string, context: ReadContext) => AsyncGenerator<ExportMessage[]>;

const READERS: Record<ExportFormat, Reader> = {
  slack: readSlack,
  discord: readDiscord,
  telegram: readTelegram,
  mattermost: readMattermost,
  whatsapp: readWhatsapp,
  irc: readIrc,
};

/** Formats whose reader takes a whole folder (the others read each file of a folder apart). */
const FOLDER_READERS = new Set<ExportFormat>(["slack", "discord"]);

/** `auto` or a format name, checked: what `--format` takes. */
export function parseExportFormat(value: string): ExportFormat | "auto" {
  if (value === "auto" || (EXPORT_FORMATS as readonly string[]).includes(value)) {
    return value as ExportFormat | "auto";
  }
  throw new ExportError(
    "EXPORT_UNKNOWN_FORMAT",
    `format: expected auto, ${EXPORT_FORMATS.join(", ")} (got ${JSON.stringify(value)})`,
  );
}

/**
 * Reads exports as messages, oldest first within each channel and channels in id order. Every
 * reader yields in that order, and the inputs are merged as they stream, so memory holds one
 * channel per input (Slack, DiscordChatExporter) or one file (Telegram, Mattermost, WhatsApp,
 * IRC, whose files come in no channel order), never a whole ZIP. A message whose id was already read
 * in its channel is left out: counted as a duplicate when its content agrees, listed as a
 * conflict (the first kept) when it does not.
 *
 * @throws ExportTimezoneError at once for an unknown `timezone`; the iteration rejects with an
 * ExportInputError (an unreadable input) or an ExportFormatError (a malformed one).
 */
export function readExports(
  inputs: readonly ExportInput[],
  options: ExportOptions = {},
): ExportReading {
  const timezone = options.timezone ?? machineTimezone();
  const wallClock = wallClockIn(timezone);
  const report: ExportReport = {
    timezone,
    zonelessTimes: 0,
    files: [],
    skippedItems: [],
    duplicates: 0,
    conflicts: [],
    channels: [],
    notes: [],
  };
  if (inputs.length === 0) throw new ExportInputError("(no input)", "give at least one export");
  let started = false;
  const counter = { messages: 0 };
  async function* batches(): AsyncGenerator<ExportMessage[]> {
    const streams: Stream[] = [];
    for (const input of inputs) {
      const path = typeof input === "string" ? input : input.path;
      const given = typeof input === "string" ? "auto" : (input.format ?? "auto");
      const info = await stat(path).catch(() => undefined);
      if (!info) throw new ExportInputError(path, "no such file or folder");
      // A FIFO would block the read for good, a device (/dev/zero) never end.
      if (!info.isFile() && !info.isDirectory()) {
        throw new ExportInputError(path, "not a regular file or folder (a pipe or a device?)");
      }
      const format = given === "auto" ? await detectFormat(path) : given;
      const files = FOLDER_READERS.has(format) ? [path] : await formatFiles(path, format);
      for (const file of files) {
        const context = new ReadContext(
          report,
          wallClock,
          options.onProgress,
          file,
          format,
          counter,
        );
        streams.push(new Stream(READERS[format](file, context), context));
      }
    }
    try {
      yield* merge(streams, report);
    } finally {
      await Promise.all(streams.map((s) => s.close()));
    }
  }
  const start = () => {
    if (started) throw new ExportError("EXPORT_READ_TWICE", "an ExportReading is read once");
    started = true;
    return batches();
  };
  async function* messages(source: AsyncGenerator<ExportMessage[]>): AsyncGenerator<ExportMessage> {
    for await (const batch of source) yield* batch;
  }
  return {
    report,
    batches: start,
    [Symbol.asyncIterator]: () => messages(start()),
  };
}

/** One reader's batches (each sorted, in order), with the next message looked at. */
class Stream {
  private batch: ExportMessage[] = [];
  private index = 0;
  head: ExportMessage | undefined;
  private problems: FileTally | undefined;

  constructor(
    private readonly batches: AsyncGenerator<ExportMessage[]>,
    readonly context: ReadContext,
  ) {}

  /** Moves to the next message, awaiting only when the batch is used up. */
  async advance(): Promise<void> {
    if (!this.step()) await this.refill();
  }

  /** Moves to the next message of the batch at hand; false when it is used up. */
  step(): boolean {
    if (this.index + 1 >= this.batch.length) return false;
    this.index++;
    this.check(this.batch[this.index - 1], this.batch[this.index]);
    return true;
  }

  private async refill(): Promise<void> {
    const previous = this.head;
    for (;;) {
      const next = await this.batches.next();
      if (next.done) {
        this.head = undefined;
        return;
      }
      if (next.value.length === 0) continue;
      this.batch = next.value;
      this.index = 0;
      if (previous) this.check(previous, this.batch[0]);
      else this.head = this.batch[0];
      return;
    }
  }

  private check(previous: ExportMessage, next: ExportMessage): void {
    // Every reader sorts what it holds: out of order would be a reader's bug, not the input's.
    if (compareExportMessages(previous, next) > 0) {
      throw new ExportError("EXPORT_ORDER", `${this.context.input}: reader yielded out of order`);
    }
    this.head = next;
  }

  /** Leaves the head out as unusable, in the input's tally. */
  refuse(field: string, reason: string): void {
    this.problems ??= this.context.file(this.context.input);
    this.problems.skip("message", field, reason);
  }

  async close(): Promise<void> {
    await this.batches.return(undefined);
  }
}

async function* merge(streams: Stream[], report: ExportReport): AsyncGenerator<ExportMessage[]> {
  for (const stream of streams) await stream.advance();
  const now = Date.now();
  let channel: string | undefined;
  let ids = new Set<string>();
  // Repeats of an id share its timestamp on every platform: its first message is at hand to compare.
  const sameTs = new Map<string, ExportMessage>();
  let groupTs = "";
  let out: ExportMessage[] = [];
  for (;;) {
    let next: Stream | undefined;
    for (const stream of streams) {
      if (stream.head && (!next?.head || compareExportMessages(stream.head, next.head) < 0)) {
        next = stream;
      }
    }
    if (!next?.head) break;
    const message = next.head;
    if (!next.step()) {
      // About to wait for a reader: what is ready goes out first.
      if (out.length > 0) yield out;
      out = [];
      await next.advance();
    }
    if (message.channel !== channel) {
      const problem =
        conversationIdProblem(message.channel) ??
        tooLong(message.channel, MAX_CONVERSATION_ID_BYTES);
      if (problem !== undefined) {
        next.refuse("channel", `not a usable channel id: ${problem}`);
        continue;
      }
      channel = message.channel;
      ids = new Set();
    }
    if (message.ts !== groupTs) {
      sameTs.clear();
      groupTs = message.ts;
    }
    if (ids.has(message.id)) {
      const earlier = sameTs.get(message.id);
      const fields = earlier ? differingFields(earlier, message) : ["ts"];
      if (fields.length === 0) report.duplicates++;
      else if (report.conflicts.length < MAX_REPORTED_ITEMS) {
        report.conflicts.push({ channel: message.channel, id: message.id, fields });
      }
      continue;
    }
    const idProblem = messageIdProblem(message.id) ?? tooLong(message.id, MAX_MESSAGE_ID_BYTES);
    if (idProblem !== undefined) {
      next.refuse("id", `not a usable message id: ${idProblem}`);
      continue;
    }
    // As ingestion refuses it: a dry run says so before anything is stored.
    const future = futureTimestampProblem(Date.parse(message.ts), now);
    if (future !== undefined) {
      next.refuse("ts", future);
      continue;
    }
    ids.add(message.id);
    sameTs.set(message.id, message);
    summarize(report, message);
    wellFormed(message);
    out.push(message);
    if (out.length >= BATCH_SIZE) {
      yield out;
      out = [];
    }
  }
  if (out.length > 0) yield out;
}

/** Counts the message in its channel's summary (channels come one after another). */
function summarize(report: ExportReport, message: ExportMessage): void {
  const last = report.channels.at(-1);
  if (last?.channel === message.channel) {
    last.messages++;
    last.last = message.ts;
    return;
  }
  report.channels.push({
    channel: message.channel,
    channelName: message.channelName,
    ...(message.platform ? { platform: message.platform } : {}),
    messages: 1,
    first: message.ts,
    last: message.ts,
  });
}

/** Lone surrogates (JSON escapes can make them) replaced: the stores keep UTF-8. */
function wellFormed(message: ExportMessage): void {
  if (!message.text.isWellFormed()) message.text = message.text.toWellFormed();
  if (message.user !== null && !message.user.isWellFormed())
    message.user = message.user.toWellFormed();
  if (!message.channelName.isWellFormed()) message.channelName = message.channelName.toWellFormed();
}

/** Over the bytes the store's keys take (it would refuse the message), said before storing. */
function tooLong(id: string, max: number): string | undefined {
  const bytes = Buffer.byteLength(id);
  return bytes > max ? `takes ${bytes} bytes as UTF-8, over the ${max} an id may take` : undefined;
}
