/**
 * Ingestion: chat platform messages, and their edits and deletions, into the history store, one
 * conversation per channel. Every input gets an answer: stored, unchanged (already stored as
 * sent), in conflict (already stored differently: the stored version is kept), deleted (its id
 * was deleted: not stored), a change's status, rejected (invalid, with the field at fault) or
 * failed (the store did not confirm it; `uncertain` when it may have been stored after all). Each
 * input is validated on its own before any I/O, so the valid ones of a batch are written even
 * when others are invalid.
 */

import { futureTimestampProblem } from "../../base/identity/index.js";
import type { Editor, MessageChange } from "../../history/changes/index.js";
import { storageProblem } from "../../history/dynamodb/index.js";
import {
  copyPlatformFields,
  type ExistingMessage,
  findCause,
  kindOf,
  type Message,
  messageText,
  textMessage,
  WriteError,
  type Writer,
} from "../../history/index.js";
import {
  type ChatMessage,
  type ChatOperation,
  InvalidMessageError,
  parseChatOperation,
} from "../../history/messages/index.js";
import { LeaseReleaseError } from "../../history/positions/index.js";
import {
  type AppliedChange,
  applyChange,
  type ChangeListener,
  type ChangeReport,
  notifyApplied,
} from "./changes.js";
import { type ProducerGrant, type RefusalReason, refusal } from "./grants.js";

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
  /** The author's stable platform id (`user` stays the display name). */
  userId?: string | number | null;
  /** The id of the message this one answers, in the same channel. */
  replyTo?: string | number | null;
  /** The id of the thread's root, when this message is a thread reply. */
  thread?: string | number | null;
  /** A short lower-case platform name (`slack`, `discord`). */
  platform?: string | null;
  /** The channel's display name (`channel` is its stable id). */
  channelName?: string | null;
  /** Discord: the channel's guild, a snowflake (for the message's link). */
  guild?: string | null;
  /** Telegram: a public group's or channel's username, without the `@` (for its `t.me` link). */
  chatUsername?: string | null;
  /** Absent (or `add`) for a new message; see {@link ChatChangeInput} for the others. */
  op?: "add" | null;
}

/** An edit or deletion of a stored message, as an ingestion caller sends it. */
export type ChatChangeInput =
  | {
      op: "edit";
      id: string | number;
      channel?: string;
      text: string;
      /** When the platform made the edit: ISO-8601 with a zone, or epoch milliseconds. */
      editedAt: string | number;
    }
  | { op: "delete"; id: string | number; channel?: string };

export interface Rejection {
  index: number;
  field: string;
  problem: string;
}

/** A message whose id was already stored with other content; the stored version is kept. */
interface Conflict {
  index: number;
  /**
   * The fields that differ from the stored message: `ts`, `text`, `user`, `kind`, and of the
   * platform fields those that say who wrote it and what it answers (`userId`, `replyTo`,
   * `thread`). A `platform` or `channelName` that differs is no conflict: a channel is renamed.
   */
  fields: ("ts" | "text" | "user" | "kind" | "userId" | "replyTo" | "thread")[];
}

/** A line its producer may not send (`IngestOptions.grant`): nothing of it was applied. */
interface Refusal {
  index: number;
  reason: RefusalReason;
}

interface Failure {
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
  /** Indexes of new messages whose id was deleted (once stored, or within the hold before it arrived): not stored. */
  deleted: number[];
  /** Edits and deletions and what each did (one that failed is in `failed` instead). */
  changes: ChangeReport[];
  /** Valid lines outside the producer's grant: to another channel, or a change without the right. */
  refused: Refusal[];
}

/** The store ingestion writes: messages, and their edits and deletions. */
export type IngestStore = Writer & Editor;

/**
 * How a chat message is kept in history: a user-role text, with the platform's id, time, author,
 * (for a bot's or system line) kind, and the platform fields it carries.
 */
export function historyMessage(message: ChatMessage): Message {
  const stored = textMessage("user", message.text ?? "", {
    id: message.id,
    ts: message.ts,
    ...(message.user ? { author: message.user } : {}),
    ...(message.kind === undefined ? {} : { kind: message.kind }),
  });
  copyPlatformFields(message, stored);
  return stored;
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
  /** Told of each channel's applied edits and deletions, to redact what was derived from them. */
  onChanged?: ChangeListener;
  /** The wall clock a message may be at most a day ahead of (default `Date.now`). */
  now?: () => number;
  /** What the sender may send; lines outside it are refused. Default: anything (an operator). */
  grant?: ProducerGrant;
}

/** One valid input of a channel: a new message, or a change. */
type ItemBody = { kind: "add"; message: Message } | { kind: "change"; change: MessageChange };
type Item = { index: number } & ItemBody;

/** An outcome with nothing in it yet, for a caller that adds up its own. */
export const emptyIngestResult = (): IngestResult => ({
  stored: [],
  unchanged: [],
  conflicts: [],
  rejected: [],
  failed: [],
  deleted: [],
  changes: [],
  refused: [],
});

/**
 * Validates each input (the chat message format, and what DynamoDB would refuse: key lengths and
 * item size), then applies the valid ones channel by channel (channels concurrently, at most
 * `concurrency` at a time), in input order within a channel: consecutive new messages in one
 * write, each change on its own. Once something of a channel fails, its later inputs are failed
 * unattempted, so that an add and a deletion of one message never apply out of order. The
 * channel's applied changes then go to `onChanged`.
 */
export async function ingest(
  store: IngestStore,
  inputs: readonly unknown[],
  options: IngestOptions = {},
): Promise<IngestResult> {
  const result = emptyIngestResult();
  const channels = new Map<string, Item[]>();
  const now = (options.now ?? Date.now)();
  inputs.forEach((input, index) => {
    const parsed = validate(input, now);
    if ("field" in parsed) {
      result.rejected.push({ index, ...parsed });
      return;
    }
    if (options.grant !== undefined) {
      const op = parsed.item.kind === "add" ? "add" : parsed.item.change.kind;
      const reason = refusal(options.grant, parsed.channel, op);
      if (reason !== undefined) {
        result.refused.push({ index, reason });
        return;
      }
    }
    const items = channels.get(parsed.channel) ?? [];
    channels.set(parsed.channel, items);
    items.push({ index, ...parsed.item });
  });
  const work = [...channels].map(
    ([channel, items]) =>
      () =>
        ingestChannel(store, channel, items, options, result),
  );
  await runLimited(work, options.concurrency ?? 8);
  for (const list of [result.stored, result.unchanged, result.deleted]) list.sort((a, b) => a - b);
  for (const list of [result.conflicts, result.failed, result.changes]) {
    list.sort((a, b) => a.index - b.index);
  }
  return result;
}

/** One channel's items in input order, reported into `result`. */
async function ingestChannel(
  store: IngestStore,
  channel: string,
  items: Item[],
  options: IngestOptions,
  result: IngestResult,
): Promise<void> {
  const applied: { index: number; change: MessageChange; applied: AppliedChange }[] = [];
  let at = 0;
  let stop: Omit<Failure, "index"> | undefined;
  while (at < items.length && stop === undefined) {
    const item = items[at];
    if (item.kind === "change") {
      at++;
      const attempt = await applyChange(store, channel, item, {
        signal: options.signal,
        tracked: options.onChanged !== undefined,
      });
      if (!attempt.ok) {
        result.failed.push({
          index: item.index,
          error: attempt.error,
          uncertain: attempt.uncertain,
        });
        stop = { error: "not attempted: an earlier input of its channel failed", uncertain: false };
      } else if (attempt.applied === undefined) {
        result.changes.push(attempt.report);
      } else {
        applied.push({ index: item.index, change: item.change, applied: attempt.applied });
      }
      continue;
    }
    let end = at;
    while (end < items.length && items[end].kind === "add") end++;
    const adds = items.slice(at, end) as (Item & { kind: "add" })[];
    at = end;
    const accepted = await storeAdds(store, channel, adds, options, result);
    if (accepted < adds.length) {
      stop = { error: "not attempted: an earlier input of its channel failed", uncertain: false };
    }
  }
  for (const item of items.slice(at))
    result.failed.push({ index: item.index, ...(stop as Omit<Failure, "index">) });
  if (applied.length === 0) return;
  const failure =
    options.onChanged === undefined
      ? undefined
      : await notifyApplied(store, channel, applied, options.onChanged, options.signal);
  for (const { index, change } of applied) {
    if (failure === undefined) result.changes.push({ index, op: change.kind, status: "applied" });
    else result.failed.push({ index, error: failure, uncertain: true });
  }
}

/** A run of new messages, written at once; returns how many were confirmed. */
async function storeAdds(
  writer: Writer,
  channel: string,
  adds: (Item & { kind: "add" })[],
  options: IngestOptions,
  result: IngestResult,
): Promise<number> {
  const messages = adds.map((a) => a.message);
  const outcome = await storeChannel(writer, channel, messages, options);
  const existing = new Map(outcome.existing.map((e) => [e.index, e.stored]));
  adds.slice(0, outcome.accepted).forEach(({ index }, i) => {
    const stored = existing.get(i);
    if (stored === undefined) result.stored.push(index);
    else if (stored.deleted) result.deleted.push(index);
    else {
      const fields = differences(messages[i], stored);
      if (fields.length === 0) result.unchanged.push(index);
      else result.conflicts.push({ index, fields });
    }
  });
  for (const { index } of adds.slice(outcome.accepted)) {
    result.failed.push({ index, ...outcome.failure });
  }
  return outcome.accepted;
}

/**
 * Why ingestion would reject `input` (the field at fault and the problem), or undefined when it
 * would take it: the checks `ingest` makes before any I/O.
 */
export function ingestionProblem(
  input: unknown,
  now = Date.now(),
): Omit<Rejection, "index"> | undefined {
  const checked = validate(input, now);
  return "field" in checked ? checked : undefined;
}

/** One input as an item of its channel, or what is wrong with it. */
function validate(
  input: unknown,
  now: number,
): { channel: string; item: ItemBody } | Omit<Rejection, "index"> {
  let operation: ChatOperation;
  try {
    operation = parseChatOperation(input);
  } catch (error) {
    if (!(error instanceof InvalidMessageError)) throw error;
    return { field: error.field, problem: error.reason };
  }
  if (operation.op === "add") {
    const chat = operation.message;
    const future = futureTimestampProblem(chat.ts, now);
    if (future !== undefined) return { field: "ts", problem: future };
    const message = historyMessage(chat);
    const problem = storageProblem(chat.channel, message);
    if (problem !== undefined) {
      const field =
        problem.part === "conversation" ? "channel" : problem.part === "id" ? "id" : largest(chat);
      return { field, problem: problem.reason };
    }
    return { channel: chat.channel, item: { kind: "add", message } };
  }
  const change: MessageChange =
    operation.op === "edit"
      ? { kind: "edit", id: operation.id, text: operation.text, editedAt: operation.editedAt }
      : { kind: "delete", id: operation.id };
  // What the edited item would hold at least: its id and the new text.
  const sized = textMessage("user", change.kind === "edit" ? change.text : "", { id: change.id });
  const problem = storageProblem(operation.channel, sized);
  if (problem !== undefined) {
    const field =
      problem.part === "conversation" ? "channel" : problem.part === "id" ? "id" : "text";
    return { field, problem: problem.reason };
  }
  return { channel: operation.channel, item: { kind: "change", change } };
}

/** The field that makes an oversized message oversized: the larger of `text` and `user`. */
function largest(chat: ChatMessage): "text" | "user" {
  const bytes = (value: string | null | undefined) => Buffer.byteLength(value ?? "");
  return bytes(chat.user) > bytes(chat.text) ? "user" : "text";
}

/**
 * The fields in which a message differs from the stored one of the same id. The text of an
 * edited message differs from its first version by design: only `ts`, `user`, `kind`, `userId`,
 * `replyTo` and `thread` count.
 */
function differences(sent: Message, stored: Message): Conflict["fields"] {
  const fields: Conflict["fields"] = [];
  if (sent.ts !== stored.ts) fields.push("ts");
  if (stored.editedAt === undefined && messageText(sent) !== messageText(stored)) {
    fields.push("text");
  }
  if ((sent.author ?? null) !== (stored.author ?? null)) fields.push("user");
  if (kindOf(sent) !== kindOf(stored)) fields.push("kind");
  for (const field of ["userId", "replyTo", "thread"] as const) {
    if ((sent[field] ?? null) !== (stored[field] ?? null)) fields.push(field);
  }
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
