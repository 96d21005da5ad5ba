/**
 * The report's inputs as records: a segment line (what `run --out` writes, or `segment --json`)
 * and a candidates line (what `run --candidates` writes), validated one decoded JSON value at a
 * time so that the caller can name the line at fault.
 */
import {
  conversationIdProblem,
  type MessageRef,
  messageIdProblem,
} from "../../base/identity/index.js";
import { type ChatMessage, parseTimestamp } from "../../history/messages/index.js";
import type { CandidatesLine } from "../../segmentation/pipeline/contract/index.js";
import type { Usage } from "./data.js";

export interface SegmentRecord {
  channel: string;
  segmentId: string;
  /** In segment order. */
  messageIds: readonly string[];
  late: boolean;
  /** Of a late segment: the delivered segment its messages belong after. */
  belongsAfter: string | null;
  first: MessageRef;
  last: MessageRef;
  /** Of a thread's segment: the id of the thread's root message. */
  thread?: string;
  /** The thread's root, as context (not one of the segment's messages). */
  threadRoot?: ThreadRoot;
  /**
   * In `linked` mode, the conversation the reply linker put its messages in: the id of the
   * conversation's first message (docs/conversations.md). Absent for a thread's segment.
   */
  conversation?: string;
  /**
   * Its messages as a segment body carries them inline: the report reads only the parent the
   * reply linker inferred for each (`inferredReplyTo`), which the input messages lack.
   */
  messages?: readonly InferredLink[];
}

/** What the report reads of a segment body's inline message. */
interface InferredLink {
  id: string;
  inferredReplyTo?: string;
}

/**
 * A message the report shows: a chat message, with the parent the reply linker inferred for it
 * when it was read from a store the segmentation tick wrote (`Message.inferredReplyTo`).
 */
export interface ReportMessage extends ChatMessage {
  inferredReplyTo?: string;
}

/** What the report takes of a segment's thread root: who wrote it and what it said. */
interface ThreadRoot {
  author?: string;
  text?: string;
}

/** A value that is not a valid record; `field` names what is at fault (`candidates[2].topic`). */
export class InvalidRecordError extends Error {
  override readonly name = "InvalidRecordError";
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}

/**
 * A segment line: `channel`, `messageIds` and `first`/`last` (`{id, ts}` as `run` writes them, or
 * timestamps as `segment --json` does), with optional `segmentId` (default: the first message's
 * id), `late`, `belongsAfter`, `count` (checked against `messageIds`), and of a thread's segment
 * `thread` (its root's id) and `threadRoot` (the root: its `author` and `text` are read), of a
 * linked conversation's segment `conversation` (its first message's id), and of an inline body
 * its `messages`' `id` and `inferredReplyTo` (the reply linker's links). Other fields are ignored.
 *
 * @throws InvalidRecordError naming the first field at fault.
 */
export function parseSegmentRecord(value: unknown): SegmentRecord {
  const record = object(value, "segment");
  const channel = record.channel;
  const channelProblem = conversationIdProblem(channel);
  if (channelProblem !== undefined) fail("channel", `${channelProblem} (got ${kindOf(channel)})`);
  const messageIds = record.messageIds;
  if (!Array.isArray(messageIds) || messageIds.length === 0) {
    fail("messageIds", `expected a non-empty array of message ids (got ${kindOf(messageIds)})`);
  }
  const ids = messageIds.map((id, i) => messageId(id, `messageIds[${i}]`));
  if (record.count !== undefined && record.count !== ids.length) {
    fail("count", `${kindOf(record.count)} but messageIds has ${ids.length}`);
  }
  const first = bound(record.first, "first", ids[0]);
  const last = bound(record.last, "last", ids[ids.length - 1]);
  if (last.ts < first.ts) fail("last", "is before first");
  const segmentId = optional(record, "segmentId", "string") ?? ids[0];
  if (segmentId === "") fail("segmentId", "empty");
  const belongsAfter = record.belongsAfter ?? null;
  if (belongsAfter !== null && typeof belongsAfter !== "string") {
    fail("belongsAfter", `expected a segment id or null (got ${kindOf(belongsAfter)})`);
  }
  const thread = record.thread ?? undefined;
  const root = record.threadRoot ?? undefined;
  const threadRoot = root === undefined ? undefined : object(root, "threadRoot");
  const author = threadRoot && optional(threadRoot, "author", "string", "threadRoot");
  const text = threadRoot && optional(threadRoot, "text", "string", "threadRoot");
  const conversation = record.conversation ?? undefined;
  const links = inferredLinks(record.messages);
  return {
    channel: channel as string,
    segmentId,
    messageIds: ids,
    late: optional(record, "late", "boolean") ?? false,
    belongsAfter,
    first,
    last,
    ...(thread === undefined ? {} : { thread: messageId(thread, "thread") }),
    ...(threadRoot === undefined
      ? {}
      : {
          threadRoot: {
            ...(author === undefined ? {} : { author }),
            ...(text === undefined ? {} : { text }),
          },
        }),
    ...(conversation === undefined
      ? {}
      : { conversation: messageId(conversation, "conversation") }),
    ...(links.length === 0 ? {} : { messages: links }),
  };
}

/** The inferred links of a body's inline `messages` (none when it has none: a reference form). */
function inferredLinks(messages: unknown): InferredLink[] {
  if (messages === undefined || messages === null) return [];
  if (!Array.isArray(messages)) fail("messages", `expected an array (got ${kindOf(messages)})`);
  return messages.flatMap((value, i) => {
    const message = object(value, "message", `messages[${i}]`);
    const parent = message.inferredReplyTo ?? undefined;
    if (parent === undefined) return [];
    return [
      {
        id: messageId(message.id, `messages[${i}].id`),
        inferredReplyTo: messageId(parent, `messages[${i}].inferredReplyTo`),
      },
    ];
  });
}

/**
 * A candidates line: `channel`, `segmentId`, `model`, `promptVersion`, `candidates` (each with a
 * `topic`, and `reason`, `confidence`, `tags`, `subjective`, `wikiWorthy`, `messageIds` when
 * given) and `usage` (missing counts are 0). Other fields are ignored.
 *
 * @throws InvalidRecordError naming the first field at fault.
 */
export function parseCandidatesRecord(value: unknown): CandidatesLine {
  const record = object(value, "candidates line");
  const text = (field: string) => {
    const v = record[field];
    if (typeof v !== "string" || v === "") fail(field, `expected a string (got ${kindOf(v)})`);
    return v;
  };
  const list = record.candidates;
  if (!Array.isArray(list)) fail("candidates", `expected an array (got ${kindOf(list)})`);
  const usage = record.usage === undefined ? {} : object(record.usage, "usage", "usage");
  const count = (field: keyof Usage) => {
    const v = usage[field] ?? 0;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
      fail(`usage.${field}`, `expected a count (got ${kindOf(v)})`);
    }
    return v;
  };
  return {
    channel: text("channel"),
    segmentId: text("segmentId"),
    model: text("model"),
    promptVersion: text("promptVersion"),
    candidates: list.map((c, i) => candidate(c, `candidates[${i}]`)),
    usage: {
      calls: count("calls"),
      inputTokens: count("inputTokens"),
      outputTokens: count("outputTokens"),
      cacheReadTokens: count("cacheReadTokens"),
      cacheWriteTokens: count("cacheWriteTokens"),
    },
  };
}

function candidate(value: unknown, at: string): CandidatesLine["candidates"][number] {
  const record = object(value, "candidate", at);
  const topic = record.topic;
  if (typeof topic !== "string" || topic.trim() === "") {
    fail(`${at}.topic`, `expected a non-blank string (got ${kindOf(topic)})`);
  }
  const confidence = record.confidence ?? 0;
  if (typeof confidence !== "number" || !Number.isFinite(confidence)) {
    fail(`${at}.confidence`, `expected a number (got ${kindOf(confidence)})`);
  }
  const tags = record.tags ?? [];
  if (!Array.isArray(tags) || tags.some((tag) => typeof tag !== "string")) {
    fail(`${at}.tags`, `expected an array of strings (got ${kindOf(tags)})`);
  }
  const range = record.messageIds ?? null;
  if (range !== null && (!Array.isArray(range) || range.length !== 2)) {
    fail(`${at}.messageIds`, `expected [first, last] or null (got ${kindOf(range)})`);
  }
  const wikiWorthy = optional(record, "wikiWorthy", "boolean", at);
  return {
    topic,
    reason: optional(record, "reason", "string", at) ?? "",
    confidence,
    tags,
    subjective: optional(record, "subjective", "boolean", at) ?? false,
    ...(wikiWorthy === undefined ? {} : { wikiWorthy }),
    messageIds:
      range === null
        ? null
        : [messageId(range[0], `${at}.messageIds[0]`), messageId(range[1], `${at}.messageIds[1]`)],
  };
}

/** `first` or `last`: a `{id, ts}` reference, or a bare timestamp of the message `fallbackId`. */
function bound(value: unknown, field: string, fallbackId: string): MessageRef {
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const ref = value as Record<string, unknown>;
    return { id: messageId(ref.id, `${field}.id`), ts: timestamp(ref.ts, `${field}.ts`) };
  }
  return { id: fallbackId, ts: timestamp(value, field) };
}

function timestamp(value: unknown, field: string): number {
  try {
    return parseTimestamp(value);
  } catch (error) {
    return fail(field, (error as Error).message);
  }
}

function messageId(value: unknown, field: string): string {
  if (typeof value !== "string") fail(field, `expected a message id (got ${kindOf(value)})`);
  const problem = messageIdProblem(value);
  if (problem !== undefined) fail(field, problem);
  return value;
}

function object(value: unknown, what: string, field = what): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    fail(field, `expected a JSON object (got ${kindOf(value)})`);
  }
  return value as Record<string, unknown>;
}

function optional<K extends "string" | "boolean">(
  record: Record<string, unknown>,
  field: string,
  type: K,
  at?: string,
): (K extends "string" ? string : boolean) | undefined {
  const value = record[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== type) {
    fail(at === undefined ? field : `${at}.${field}`, `expected a ${type} (got ${kindOf(value)})`);
  }
  return value as K extends "string" ? string : boolean;
}

function fail(field: string, reason: string): never {
  throw new InvalidRecordError(field, reason);
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === "string")
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return typeof value;
}

/** What a report is built from: the segments, and what extraction and the input add. */
export interface ReportInput {
  /** In delivery order. */
  segments: readonly SegmentRecord[];
  /** What extraction made of the segments; absent when it did not run. */
  candidates?: readonly CandidatesLine[];
  /** The messages that were segmented; without them the report shows the segments alone. */
  messages?: readonly ReportMessage[];
  /** The segmenter's settle (ms): a longer silence ends a conversation. */
  settle: number;
  /** Epoch ms: a channel's trailing conversation quiet for no longer than `settle` is open. */
  now: number;
  generatedAt: number;
  sources?: { label: string; value: string }[];
  /** The channels of the generated sample (`run` without `--input`): marked, and listed last. */
  sampleChannels?: readonly string[];
  /** People never named among a channel's answerers (names or ids, any case): the opt-out. */
  optOut?: readonly string[];
}
