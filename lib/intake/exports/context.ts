/** What a reader is handed: where to report what it skipped, noted and read. */
import type { WallClock } from "./timezone.js";
import {
  type ExportFormat,
  type ExportProgress,
  type ExportReport,
  type FileReport,
  MAX_REPORTED_ITEMS,
} from "./types.js";

/** The tally of one file: messages taken, and each entry or line left out with its reason. */
export class FileTally {
  constructor(
    readonly context: ReadContext,
    readonly report: FileReport,
  ) {}

  taken(): void {
    this.report.messages++;
    this.context.messagesRead++;
  }

  /** `value` as a record of the reader's shape, or undefined after leaving it out as `field`. */
  record<T>(value: unknown, at: string, field = "message"): T | undefined {
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as T;
    this.skip(at, field, `expected an object (got ${describe(value)})`);
    return undefined;
  }

  /** Leaves an entry out: `reason` is the reader's own words, never the input's text. */
  skip(at: string, field: string, reason: string): void {
    const key = `${field}: ${reason}`;
    this.report.skipped[key] = (this.report.skipped[key] ?? 0) + 1;
    const items = this.context.report.skippedItems;
    if (items.length < MAX_REPORTED_ITEMS)
      items.push({ file: this.report.file, at, field, reason });
  }
}

export class ReadContext {
  constructor(
    readonly report: ExportReport,
    readonly wallClock: WallClock,
    private readonly onProgress: ((progress: ExportProgress) => void) | undefined,
    /** The input being read and its format, which progress names. */
    readonly input: string,
    readonly format: ExportFormat,
    /** Messages taken so far over every input: what progress reports. */
    private readonly counter: { messages: number },
  ) {}

  get messagesRead(): number {
    return this.counter.messages;
  }

  set messagesRead(value: number) {
    this.counter.messages = value;
  }

  /** Starts the tally of a file (a ZIP entry is `zip!entry`). */
  file(name: string): FileTally {
    const report: FileReport = { file: name, format: this.format, messages: 0, skipped: {} };
    this.report.files.push(report);
    return new FileTally(this, report);
  }

  /** A zone-less time was read in the report's zone. */
  zoneless(): void {
    this.report.zonelessTimes++;
  }

  note(text: string): void {
    if (!this.report.notes.includes(text)) this.report.notes.push(text);
  }

  /** What hears a text file's lines that are not UTF-8: a note naming the file and the first. */
  notUtf8(file: string): (line: number) => void {
    let heard = false;
    return (line) => {
      if (heard) return;
      heard = true;
      this.note(
        `${file}: not UTF-8 text (line ${line} the first such): those lines were read as Windows-1252 (Latin-1); save the file as UTF-8 if their letters look wrong`,
      );
    };
  }

  progress(file: string, filesDone: number, filesTotal?: number): void {
    this.onProgress?.({
      input: this.input,
      format: this.format,
      file,
      filesDone,
      ...(filesTotal === undefined ? {} : { filesTotal }),
      messages: this.messagesRead,
    });
  }
}

/** A word from the input (a subtype, a type name) safe to use in a reason, or `unknown`. */
export function safeWord(value: unknown): string {
  return typeof value === "string" && /^[A-Za-z0-9_]{1,40}$/.test(value) ? value : "unknown";
}

/** A short, safe description of an unexpected value for a reason. */
export function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * Where a `JSON.parse` error points (` at character 12`), or nothing: the parser's own message
 * quotes the input, which must not reach a report or a log.
 */
export function jsonErrorAt(error: unknown): string {
  const match = /position (\d+)/.exec(error instanceof Error ? error.message : "");
  return match ? ` at character ${Number(match[1]) + 1}` : "";
}
