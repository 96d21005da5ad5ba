/**
 * Ingestion: chat platform messages into the history store, one conversation per channel. Every
 * message gets an answer: stored, unchanged (already stored as sent), in conflict (already stored
 * differently: the stored version is kept), rejected (invalid, with the field at fault) or failed
 * (the store did not confirm it; `uncertain` when it may have been stored after all). Each message
 * is validated on its own before any I/O, so the valid ones of a batch are written even when
 * others are invalid.
 */
import {
  type ExistingMessage,
  findCause,
  kindOf,
  LeaseReleaseError,
  type Message,
  messageText,
  storageProblem,
  textMessage,
  WriteError,
  type Writer,
} from "../history/index.js";
import { type ChatMessage, InvalidMessageError, parseChatMessage } from "../messages/index.js";

/** A chat message as an ingestion caller sends it (the JSON-lines input format). */
export interface ChatMessageInput {
  id: string | number;
  /** ISO-8601 with a zone, or epoch milliseconds. */
  ts: string | number;
  channel?: string;
  user?: string | null;
  text?: string | null;
  /** `user` (the default), `bot` or `system`; `system: true` says `system` too. */
  kind?: "user" | "bot" | "system";
  system?: boolean | null;
}

export interface Rejection {
  index: number;
  field: string;
  problem: string;
}

/** A message whose id was already stored with other content; the stored version is kept. */
export interface Conflict {
  index: number;
  /** The fields that differ from the stored message: `ts`, `text`, `user` and/or `kind`. */
  fields: ("ts" | "text" | "user" | "kind")[];
}

export interface Failure {
  index: number;
  error: string;
  /** The message may have been stored anyway: resubmitting it is safe (ids deduplicate). */
  uncertain: boolean;
}

export interface IngestResult {
  /** Indexes of the messages stored by this call. */
  stored: number[];
  /** Indexes of messages already stored exactly as sent (a repeat): nothing to do. */
  unchanged: number[];
  /**
   * Messages already stored with a different timestamp, text or author (an edit, or a reused
   * id). The first version stays: its segment may have been delivered already.
   */
  conflicts: Conflict[];
  rejected: Rejection[];
  failed: Failure[];
}

/**
 * How a chat message is kept in history: a user-role text, with the platform's id, time, author
 * and (for a bot's or system line) kind.
 */
export function historyMessage(message: ChatMessage): Message {
  return textMessage("user", message.text ?? "", {
    id: message.id,
    ts: message.ts,
    ...(message.user ? { author: message.user } : {}),
    ...(message.kind === undefined ? {} : { kind: message.kind }),
  });
}

/**
 * The most chat messages the ingestion function takes in one direct invocation (its `MAX_BATCH`):
 * one caller cannot hold the function, and the tables' write capacity, for minutes. The queue's
 * batches are 100.
 */
export const DEFAULT_MAX_BATCH = 500;
/** The highest `MAX_BATCH` the function accepts. */
export const MAX_BATCH_LIMIT = 10_000;

export interface IngestOptions {
  /** Channels written at once (default 8). */
  concurrency?: number;
  signal?: AbortSignal;
}

/**
 * Validates each input (the chat message format, and what DynamoDB would refuse: key lengths and
 * item size), then writes the valid ones channel by channel (channels concurrently, at most
 * `concurrency` at a time), in input order within a channel.
 */
export async function ingest(
  writer: Writer,
  inputs: readonly unknown[],
  options: IngestOptions = {},
): Promise<IngestResult> {
  const result: IngestResult = {
    stored: [],
    unchanged: [],
    conflicts: [],
    rejected: [],
    failed: [],
  };
  const channels = new Map<string, { indexes: number[]; messages: Message[] }>();
  inputs.forEach((input, index) => {
    const parsed = validate(input);
    if ("field" in parsed) {
      result.rejected.push({ index, ...parsed });
      return;
    }
    const channel = channels.get(parsed.channel) ?? { indexes: [], messages: [] };
    channels.set(parsed.channel, channel);
    channel.indexes.push(index);
    channel.messages.push(parsed.message);
  });
  const work = [...channels].map(([channel, { indexes, messages }]) => async () => {
    const outcome = await storeChannel(writer, channel, messages, options);
    const existing = new Map(outcome.existing.map((e) => [e.index, e.stored]));
    indexes.slice(0, outcome.accepted).forEach((index, i) => {
      const stored = existing.get(i);
      if (stored === undefined) {
        result.stored.push(index);
        return;
      }
      const fields = differences(messages[i], stored);
      if (fields.length === 0) result.unchanged.push(index);
      else result.conflicts.push({ index, fields });
    });
    for (const index of indexes.slice(outcome.accepted))
      result.failed.push({ index, ...outcome.failure });
  });
  await runLimited(work, options.concurrency ?? 8);
  result.stored.sort((a, b) => a - b);
  result.unchanged.sort((a, b) => a - b);
  result.conflicts.sort((a, b) => a.index - b.index);
  result.failed.sort((a, b) => a.index - b.index);
  return result;
}

/**
 * Why ingestion would reject `input` (the field at fault and the problem), or undefined when it
 * would take it: the checks `ingest` makes before any I/O.
 */
export function ingestionProblem(input: unknown): Omit<Rejection, "index"> | undefined {
  const checked = validate(input);
  return "field" in checked ? checked : undefined;
}

/** One input as a history message of its channel, or what is wrong with it. */
function validate(
  input: unknown,
): { channel: string; message: Message } | Omit<Rejection, "index"> {
  let chat: ChatMessage;
  try {
    chat = parseChatMessage(input);
  } catch (error) {
    if (!(error instanceof InvalidMessageError)) throw error;
    return { field: error.field, problem: error.reason };
  }
  const message = historyMessage(chat);
  const problem = storageProblem(chat.channel, message);
  if (problem !== undefined) {
    const field =
      problem.part === "conversation" ? "channel" : problem.part === "id" ? "id" : largest(chat);
    return { field, problem: problem.reason };
  }
  return { channel: chat.channel, message };
}

/** The field that makes an oversized message oversized: the larger of `text` and `user`. */
function largest(chat: ChatMessage): "text" | "user" {
  const bytes = (value: string | null | undefined) => Buffer.byteLength(value ?? "");
  return bytes(chat.user) > bytes(chat.text) ? "user" : "text";
}

/** The fields in which a message differs from the stored one of the same id. */
function differences(sent: Message, stored: Message): Conflict["fields"] {
  const fields: Conflict["fields"] = [];
  if (sent.ts !== stored.ts) fields.push("ts");
  if (messageText(sent) !== messageText(stored)) fields.push("text");
  if ((sent.author ?? null) !== (stored.author ?? null)) fields.push("user");
  if (kindOf(sent) !== kindOf(stored)) fields.push("kind");
  return fields;
}

/**
 * Writes one channel's messages; returns how many were confirmed (the prefix), the confirmed ones
 * that were stored before, and why the rest were not. Messages that were stored but whose
 * position lease could not be released count as failed and uncertain: the pipeline was not told
 * they arrived, and resubmitting them (a no-op write) tells it.
 */
async function storeChannel(
  writer: Writer,
  channel: string,
  messages: Message[],
  options: IngestOptions,
): Promise<{
  accepted: number;
  existing: readonly ExistingMessage[];
  failure: Omit<Failure, "index">;
}> {
  try {
    const outcome = await writer.write(channel, messages, { signal: options.signal });
    return {
      accepted: outcome.accepted,
      existing: outcome.existing ?? [],
      failure: { error: "", uncertain: false },
    };
  } catch (error) {
    const outcome = findCause(error, WriteError)?.outcome ?? { accepted: 0, uncertain: true };
    if (findCause(error, LeaseReleaseError)) {
      return {
        accepted: 0,
        existing: [],
        failure: {
          error: `stored, but not scheduled for segmentation: ${(error as Error).message}`,
          uncertain: true,
        },
      };
    }
    return {
      accepted: outcome.accepted,
      existing: outcome.existing ?? [],
      failure: { error: (error as Error).message, uncertain: outcome.uncertain },
    };
  }
}

async function runLimited(tasks: (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
}
