/**
 * Reading a queue body as a v1 segment message: its shape, version and internal consistency,
 * each fault named by field. Apart from the encoder, so that each stays a file one reads whole.
 */

import { conversationIdProblem, messageIdProblem } from "../../../base/identity/index.js";
import { MESSAGE_KINDS, type MessageKind, PLATFORM_FIELDS } from "../../../history/index.js";
import type { MessageRef } from "../types.js";
import {
  type InlineMessage,
  InvalidSegmentMessageError,
  type SegmentMessageV1,
} from "./segment-message.js";

/**
 * Reads a queue body as a v1 segment message, checking its shape, version and internal
 * consistency (count, bounds and inline ids agree with `messageIds`). Throws an
 * {@link InvalidSegmentMessageError} naming the first field at fault. Unknown fields are dropped;
 * the platform fields of an inline message, when present, are non-empty strings.
 */
export function parseSegmentBody(body: string): SegmentMessageV1 {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    throw new InvalidSegmentMessageError("body", `not JSON (${(error as Error).message})`);
  }
  const record = asRecord(value, "body");
  if (record.v !== 1) {
    throw new InvalidSegmentMessageError(
      "v",
      typeof record.v === "number"
        ? `version ${record.v} is not supported; this reader understands version 1`
        : "expected the version number 1",
    );
  }
  const messageIds = stringArray(record.messageIds, "messageIds");
  if (messageIds.length === 0) {
    throw new InvalidSegmentMessageError("messageIds", "a segment has at least one message");
  }
  if (record.count !== messageIds.length) {
    throw new InvalidSegmentMessageError("count", `expected ${messageIds.length} (messageIds)`);
  }
  const segment: SegmentMessageV1 = {
    v: 1,
    segmentId: nonEmptyString(record.segmentId, "segmentId"),
    channel: channelId(record.channel),
    late: boolean(record.late, "late"),
    belongsAfter:
      record.belongsAfter === null ? null : nonEmptyString(record.belongsAfter, "belongsAfter"),
    count: messageIds.length,
    first: boundRef(record.first, "first", messageIds[0]),
    last: boundRef(record.last, "last", messageIds.at(-1)),
    messageIds,
  };
  if (record.thread !== undefined) {
    segment.thread = messageId(record.thread, "thread");
    if (record.threadRoot !== undefined) {
      segment.threadRoot = inlineMessage(record.threadRoot, "threadRoot", segment.thread);
    }
  } else if (record.threadRoot !== undefined) {
    throw new InvalidSegmentMessageError("threadRoot", "only a thread's segment (thread) has one");
  }
  if (record.conversation !== undefined) {
    if (record.thread !== undefined) {
      throw new InvalidSegmentMessageError(
        "conversation",
        "a thread's segment (thread) is in no linked conversation",
      );
    }
    segment.conversation = messageId(record.conversation, "conversation");
  }
  if ((record.messages === undefined) === (record.reference === undefined)) {
    throw new InvalidSegmentMessageError("messages", "expected exactly one of messages, reference");
  }
  if (record.messages !== undefined) {
    segment.messages = parseInlineMessages(record.messages, messageIds);
  } else {
    const reference = asRecord(record.reference, "reference");
    segment.reference = { table: nonEmptyString(reference.table, "reference.table") };
  }
  return segment;
}

function parseInlineMessages(value: unknown, messageIds: string[]): InlineMessage[] {
  if (!Array.isArray(value) || value.length !== messageIds.length) {
    throw new InvalidSegmentMessageError(
      "messages",
      `expected an array of ${messageIds.length} (messageIds)`,
    );
  }
  return value.map((item, i) => inlineMessage(item, `messages[${i}]`, messageIds[i]));
}

/** One inline message (a segment's, or a thread's root), whose id must be `expectedId`. */
function inlineMessage(item: unknown, field: string, expectedId: string): InlineMessage {
  const record = asRecord(item, field);
  const id = nonEmptyString(record.id, `${field}.id`);
  if (id !== expectedId) {
    const of = field === "threadRoot" ? "thread" : "messageIds";
    throw new InvalidSegmentMessageError(`${field}.id`, `expected ${expectedId} (${of})`);
  }
  const message: InlineMessage = {
    id,
    ts: timestamp(record.ts, `${field}.ts`),
    text: string(record.text, `${field}.text`),
  };
  if (record.author !== undefined) message.author = string(record.author, `${field}.author`);
  if (record.kind !== undefined) message.kind = kind(record.kind, `${field}.kind`);
  for (const name of PLATFORM_FIELDS) {
    if (record[name] !== undefined)
      message[name] = nonEmptyString(record[name], `${field}.${name}`);
  }
  if (record.inferredReplyTo !== undefined)
    message.inferredReplyTo = nonEmptyString(record.inferredReplyTo, `${field}.inferredReplyTo`);
  return message;
}

function boundRef(value: unknown, field: string, expectedId: string | undefined): MessageRef {
  const record = asRecord(value, field);
  const id = nonEmptyString(record.id, `${field}.id`);
  if (id !== expectedId) {
    throw new InvalidSegmentMessageError(`${field}.id`, `expected ${expectedId} (messageIds)`);
  }
  return { id, ts: timestamp(record.ts, `${field}.ts`) };
}

function asRecord(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidSegmentMessageError(field, "expected an object");
  }
  return value as Record<string, unknown>;
}

function string(value: unknown, field: string): string {
  if (typeof value !== "string") throw new InvalidSegmentMessageError(field, "expected a string");
  return value;
}

function nonEmptyString(value: unknown, field: string): string {
  if (string(value, field) === "") {
    throw new InvalidSegmentMessageError(field, "expected a non-empty string");
  }
  return value as string;
}

function stringArray(value: unknown, field: string): string[] {
  if (!Array.isArray(value)) throw new InvalidSegmentMessageError(field, "expected an array");
  return value.map((item, i) => messageId(item, `${field}[${i}]`));
}

/** A platform message id, held to ingestion's rules. */
function messageId(value: unknown, field: string): string {
  const id = nonEmptyString(value, field);
  const problem = messageIdProblem(id);
  if (problem !== undefined) throw new InvalidSegmentMessageError(field, problem);
  return id;
}

/** The channel, held to ingestion's rules: no body names a channel ingestion would refuse. */
function channelId(value: unknown): string {
  const channel = nonEmptyString(value, "channel");
  const problem = conversationIdProblem(channel);
  if (problem !== undefined) throw new InvalidSegmentMessageError("channel", problem);
  return channel;
}

function kind(value: unknown, field: string): MessageKind {
  if (!MESSAGE_KINDS.includes(value as MessageKind)) {
    throw new InvalidSegmentMessageError(field, `expected one of ${MESSAGE_KINDS.join(", ")}`);
  }
  return value as MessageKind;
}

function boolean(value: unknown, field: string): boolean {
  if (typeof value !== "boolean") throw new InvalidSegmentMessageError(field, "expected a boolean");
  return value;
}

function timestamp(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new InvalidSegmentMessageError(field, "expected epoch milliseconds");
  }
  return value;
}
