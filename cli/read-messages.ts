import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { type ChatMessage, InvalidMessageError, parseChatMessage } from "../lib/messages/index.js";
import type { Progress } from "./progress.js";

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

export const formatProblem = (p: InputProblem): string =>
  `line ${p.line}: ${p.field}: ${p.problem}`;

/**
 * Reads chat messages as JSON lines from a file path, or standard input for `-`. Blank lines are
 * skipped; a line that is not JSON, not a valid message, or repeats an earlier (channel, id) is
 * reported as a problem and left out.
 */
export async function readMessages(
  source: string,
  progress: Progress,
  stdin: Readable = process.stdin,
): Promise<ReadResult> {
  const fromStdin = source === "-";
  const totalBytes = fromStdin ? undefined : (await stat(source)).size;
  const input = fromStdin ? stdin : createReadStream(source);
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  const result: ReadResult = { messages: [], problems: [] };
  const firstLineOf = new Map<string, number>();
  let line = 0;
  let bytes = 0;
  for await (const text of lines) {
    line++;
    bytes += Buffer.byteLength(text) + 1;
    progress.update(() => readingStatus(line, bytes, totalBytes));
    if (text.trim() === "") continue;
    const parsed = parseLine(text);
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

function parseLine(text: string): ChatMessage | InvalidMessageError {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return new InvalidMessageError("json", `not valid JSON (${(error as Error).message})`);
  }
  try {
    return parseChatMessage(value);
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
