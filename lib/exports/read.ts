/**
 * Reading exports: each input (a path, its format given or detected) read by its format's
 * reader, the inputs merged in channel-major order, and repeated ids left out (a duplicate when
 * the content agrees, a conflict when it does not), with a report of what was read and skipped.
 */
import { conversationIdProblem, messageIdProblem } from "../identity/index.js";
import { ReadContext } from "./context.js";
import { detectFormat, formatFiles } from "./detect.js";
import { readDiscord } from "./discord.js";
import { ExportError, ExportInputError } from "./errors.js";
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
}

type Reader = (input: string, context: ReadContext) => AsyncGenerator<ExportMessage>;

const READERS: Record<ExportFormat, Reader> = {
  slack: readSlack,
  discord: readDiscord,
  telegram: readTelegram,
  mattermost: readMattermost,
  whatsapp: readWhatsapp,
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
 * whose files come in no channel order), never a whole ZIP. A message whose id was already read
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
    notes: [],
  };
  if (inputs.length === 0) throw new ExportInputError("(no input)", "give at least one export");
  let started = false;
  const counter = { messages: 0 };
  async function* messages(): AsyncGenerator<ExportMessage> {
    const streams: Stream[] = [];
    for (const input of inputs) {
      const path = typeof input === "string" ? input : input.path;
      const given = typeof input === "string" ? "auto" : (input.format ?? "auto");
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
  const generator = messages();
  return {
    report,
    [Symbol.asyncIterator]() {
      if (started) throw new ExportError("EXPORT_READ_TWICE", "an ExportReading is read once");
      started = true;
      return generator;
    },
  };
}

/** One reader's messages with the next one looked at. */
class Stream {
  head: ExportMessage | undefined;
  done = false;

  constructor(
    private readonly messages: AsyncGenerator<ExportMessage>,
    readonly context: ReadContext,
  ) {}

  async advance(): Promise<void> {
    const previous = this.head;
    const next = await this.messages.next();
    this.done = next.done === true;
    this.head = next.done ? undefined : next.value;
    if (previous && this.head && compareExportMessages(previous, this.head) > 0) {
      // Every reader sorts what it holds: out of order would be a reader's bug, not the input's.
      throw new ExportError("EXPORT_ORDER", `${this.context.input}: reader yielded out of order`);
    }
  }

  async close(): Promise<void> {
    await this.messages.return(undefined);
  }
}

async function* merge(streams: Stream[], report: ExportReport): AsyncGenerator<ExportMessage> {
  for (const stream of streams) await stream.advance();
  let channel: string | undefined;
  let ids = new Set<string>();
  // Repeats of an id share its timestamp on every platform: its first message is at hand to compare.
  const sameTs = new Map<string, ExportMessage>();
  let groupTs = "";
  for (;;) {
    let next: Stream | undefined;
    for (const stream of streams) {
      if (stream.head && (!next?.head || compareExportMessages(stream.head, next.head) < 0))
        next = stream;
    }
    if (!next?.head) return;
    const message = next.head;
    await next.advance();
    if (message.channel !== channel) {
      const problem = conversationIdProblem(message.channel);
      if (problem !== undefined) {
        next.context
          .file(next.context.input)
          .skip(
            `message ${JSON.stringify(message.id)}`,
            "channel",
            `not a usable channel id: ${problem}`,
          );
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
      else if (report.conflicts.length < MAX_REPORTED_ITEMS)
        report.conflicts.push({ channel: message.channel, id: message.id, fields });
      continue;
    }
    const idProblem = messageIdProblem(message.id);
    if (idProblem !== undefined) {
      next.context
        .file(next.context.input)
        .skip("message", "id", `not a usable message id: ${idProblem}`);
      continue;
    }
    ids.add(message.id);
    sameTs.set(message.id, message);
    message.text = message.text.toWellFormed();
    if (message.user !== null) message.user = message.user.toWellFormed();
    message.channelName = message.channelName.toWellFormed();
    yield message;
  }
}
