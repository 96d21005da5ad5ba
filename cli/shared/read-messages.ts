import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import { conversationIdProblem } from "convoseg/identity";
import { type ChatMessage, InvalidMessageError, parseChatOperation } from "convoseg/messages";
import type { Progress } from "./progress.js";

/**
 * `--channel NAME`, checked: a channel id as the input lines' `channel` must be one. Undefined
 * when the flag is absent.
 */
export function channelOption(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const problem = conversationIdProblem(name);
  if (problem !== undefined) {
    throw new Error(`--channel must be a channel id: ${problem} (got ${JSON.stringify(name)})`);
  }
  return name;
}

/** A line of input that could not be taken, with the field at fault. */
export interface InputProblem {
  line: number;
  field: string;
  problem: string;
}

export interface ReadResult {
  /** Valid messages in input order, each with the line it came from. */
  messages: { message: ChatMessage; line: number }[];
  problems: InputProblem[];
}

/** The longest line read (a chat message is far shorter; DynamoDB stores at most 400 KB). */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

export interface ReadOptions {
  /** Lines longer than this are reported and skipped without being held (default 16 MiB). */
  maxLineBytes?: number;
  /** The channel of lines that name none (default `default`): what `--channel` sets. */
  defaultChannel?: string;
}

/**
 * Reads chat messages as JSON lines from a file path, or standard input for `-`. A UTF-8 byte
 * order mark is ignored; blank lines are skipped; a line that is not JSON, not a valid message,
 * longer than `maxLineBytes`, or repeats an earlier (channel, id) is reported as a problem and
 * left out.
 */
export async function readMessages(
  source: string,
  progress: Progress,
  stdin: Readable = process.stdin,
  options: ReadOptions = {},
): Promise<ReadResult> {
  const fromStdin = source === "-";
  const totalBytes = fromStdin ? undefined : (await stat(source)).size;
  const input = fromStdin ? stdin : createReadStream(source);
  const result: ReadResult = { messages: [], problems: [] };
  const firstLineOf = new Map<string, number>();
  const maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
  let bytes = 0;
  for await (const { text, line, length } of lines(input, maxLineBytes)) {
    bytes += length;
    progress.update(() => readingStatus(line, bytes, totalBytes));
    if (text === undefined) {
      result.problems.push({
        line,
        field: "json",
        problem: `line longer than ${maxLineBytes} bytes`,
      });
      continue;
    }
    if (text.trim() === "") continue;
    const parsed = parseLine(text, options.defaultChannel);
    if (parsed instanceof InvalidMessageError) {
      result.problems.push({ line, field: parsed.field, problem: parsed.reason });
      continue;
    }
    const key = `${parsed.channel}\u0000${parsed.id}`;
    const earlier = firstLineOf.get(key);
    if (earlier !== undefined) {
      result.problems.push({
        line,
        field: "id",
        problem: `duplicate of line ${earlier} in channel ${JSON.stringify(parsed.channel)}`,
      });
      continue;
    }
    firstLineOf.set(key, line);
    result.messages.push({ message: parsed, line });
  }
  return result;
}

/**
 * The lines of a byte stream (`\n` or `\r\n` ended), decoded as UTF-8 without a leading byte
 * order mark. A line over `maxLineBytes` comes as `text: undefined` and is never held whole.
 */
async function* lines(
  input: AsyncIterable<Buffer | string>,
  maxLineBytes: number,
): AsyncIterable<{ text: string | undefined; line: number; length: number }> {
  let parts: Buffer[] = [];
  let held = 0;
  let tooLong = false;
  let line = 0;
  const finish = () => {
    line++;
    const length = held;
    let text: string | undefined;
    if (!tooLong) {
      let buffer = Buffer.concat(parts);
      if (line === 1 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf) {
        buffer = buffer.subarray(3);
      }
      if (buffer.at(-1) === 0x0d) buffer = buffer.subarray(0, -1);
      text = buffer.toString("utf8");
    }
    parts = [];
    held = 0;
    tooLong = false;
    return { text, line, length: length + 1 };
  };
  for await (const chunk of input) {
    let buffer = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    for (let end = buffer.indexOf(0x0a); end >= 0; end = buffer.indexOf(0x0a)) {
      take(buffer.subarray(0, end));
      yield finish();
      buffer = buffer.subarray(end + 1);
    }
    take(buffer);
  }
  if (held > 0 || parts.length > 0) yield finish();

  function take(piece: Buffer) {
    held += piece.length;
    if (held > maxLineBytes) {
      tooLong = true;
      parts = [];
    } else if (piece.length > 0) {
      parts.push(piece);
    }
  }
}

function parseLine(text: string, defaultChannel?: string): ChatMessage | InvalidMessageError {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return new InvalidMessageError("json", `not valid JSON (${(error as Error).message})`);
  }
  try {
    const operation = parseChatOperation(value, { defaultChannel });
    if (operation.op === "add") return operation.message;
    // Named rather than read as a message without `ts`: these lines are ingestion's.
    return new InvalidMessageError(
      "op",
      `${operation.op === "edit" ? "an edit" : "a delete"} line: only ingestion (the ingest function, IngestClient) applies edits and deletions; this command reads new messages`,
    );
  } catch (error) {
    if (error instanceof InvalidMessageError) return error;
    throw error;
  }
}

function readingStatus(line: number, bytes: number, totalBytes: number | undefined): string {
  const read = `reading: ${line.toLocaleString("en-US")} lines`;
  if (!totalBytes) return read;
  return `${read}, ${Math.min(100, Math.floor((bytes / totalBytes) * 100))}%`;
}
