/** A chat message as convoseg's inputs carry it (JSON lines, ingestion batches), and its checks. */

import {
  conversationIdProblem,
  isAcceptedTimestamp,
  loneSurrogateAt,
  messageIdProblem,
  PLATFORM_PLACE_SHAPES,
} from "../../base/identity/index.js";
import { InvalidMessageError, MESSAGE_KINDS, type MessageKind } from "../index.js";

/** Channel of a message that names none. */
export const DEFAULT_CHANNEL = "default";

export interface ChatMessage {
  /** Platform message id, unique within its channel (numbers are accepted and kept as strings). */
  id: string;
  /** Platform timestamp, epoch milliseconds. */
  ts: number;
  channel: string;
  user?: string | null;
  text?: string | null;
  /** `bot` or `system` when the line says so; absent for a person's message (`user`). */
  kind?: Exclude<MessageKind, "user">;
  /** The author's stable platform id; `user` stays the display name when one is known. */
  userId?: string;
  /** The id of the message this one answers, in the same channel. */
  replyTo?: string;
  /** The id of the thread's root, when this message is a reply in a thread (on its parent channel). */
  thread?: string;
  /** The platform the message comes from, a short lower-case name (`slack`, `discord`, `irc`). */
  platform?: string;
  /** The channel's display name; `channel` stays the platform's stable id. */
  channelName?: string;
  /** Discord: the guild (server) of the channel, a snowflake; its messages' links need it. */
  guild?: string;
  /** Telegram: a public group's or channel's username, without the `@`, for its `t.me` links. */
  chatUsername?: string;
}

/** A platform name: short, lower case, so that one platform is never spelt two ways. */
const PLATFORM_NAME = /^[a-z0-9][a-z0-9._-]{0,31}$/;

/**
 * Validates one decoded JSON value as a chat message: `id` (non-empty, well-formed string, or a
 * safe integer), `ts` (ISO-8601 date-time with a zone, or epoch milliseconds as a number or digit
 * string, an accepted timestamp of `lib/base/identity`: 1970 to year 9999), optional `channel` (a
 * valid conversation id, default `options.defaultChannel`, else {@link DEFAULT_CHANNEL}), optional `user` and `text` (string or
 * null, well-formed: a lone surrogate cannot be stored as UTF-8), optional `kind` (`user`, `bot` or
 * `system`) or `system: true` (what the IRC logs carry for joins, parts and mode changes; `kind`
 * absent, null or `user` with `system` absent, null or false is a person's message, and `kind`
 * then stays unset); and the optional platform fields, each absent or null for "not known":
 * `userId` (a non-empty, well-formed string, or an integer), `replyTo` and `thread` (message ids
 * of the same channel, as `id`; a message answers another, never itself), `platform` (a short
 * lower-case name: `slack`, `discord`, `irc`), `channelName` (a non-empty, well-formed string),
 * `guild` (a Discord snowflake: 15 to 21 digits) and `chatUsername` (a Telegram username: a
 * letter, then letters, digits and `_`, 4 to 32 in all, no `@`), the last two what the
 * platform's link to the message needs. Other fields are ignored, so that a line of a later format still reads.
 *
 * @throws InvalidMessageError naming the first field at fault.
 */
export function parseChatMessage(
  value: unknown,
  options: { defaultChannel?: string } = {},
): ChatMessage {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidMessageError("message", `expected a JSON object (got ${kindOf(value)})`);
  }
  const record = value as Record<string, unknown>;
  const message: ChatMessage = {
    id: parseId(record.id),
    ts: parseTimestamp(record.ts),
    channel: parseChannel(record.channel, options.defaultChannel ?? DEFAULT_CHANNEL),
  };
  const user = optionalText(record, "user");
  const text = optionalText(record, "text");
  if (user !== undefined) message.user = user;
  if (text !== undefined) message.text = text;
  const kind = parseKind(record.kind, record.system);
  if (kind !== "user") message.kind = kind;
  parsePlatformFields(record, message);
  return message;
}

/** Sets the platform fields `record` carries on `message`; absent and null leave them unset. */
function parsePlatformFields(record: Record<string, unknown>, message: ChatMessage): void {
  const known = (field: string) => record[field] !== undefined && record[field] !== null;
  if (known("userId")) message.userId = parseId(record.userId, "userId");
  if (known("thread")) message.thread = parseId(record.thread, "thread");
  if (known("replyTo")) {
    const replyTo = parseReplyTo(record.replyTo, message.id);
    if (replyTo !== undefined) message.replyTo = replyTo;
  }
  if (known("platform")) {
    const platform = record.platform;
    if (typeof platform !== "string" || !PLATFORM_NAME.test(platform)) {
      throw new InvalidMessageError(
        "platform",
        `expected a short lower-case name such as slack or discord (got ${kindOf(platform)})`,
      );
    }
    message.platform = platform;
  }
  if (known("channelName")) {
    const name = optionalText(record, "channelName");
    if (name === "") throw new InvalidMessageError("channelName", "expected a non-empty string");
    message.channelName = name as string;
  }
  for (const field of ["guild", "chatUsername"] as const) {
    if (!known(field)) continue;
    const value = record[field];
    const shape = PLATFORM_PLACE_SHAPES[field];
    // Only a string of the platform's shape: whatever else reaches a link never does.
    if (typeof value !== "string" || !shape.test(value)) {
      throw new InvalidMessageError(
        field,
        `expected ${field === "guild" ? "a Discord snowflake (15 to 21 digits)" : "a Telegram username (a letter, then letters, digits or _, 4 to 32 in all)"} (got ${kindOf(value)})`,
      );
    }
    message[field] = value;
  }
}

/** An edit of a stored message: its new text, and when the platform made the edit. */
interface ChatEdit {
  op: "edit";
  channel: string;
  id: string;
  text: string;
  /** Epoch milliseconds; of two edits of one message the later one wins. */
  editedAt: number;
}

interface ChatDeletion {
  op: "delete";
  channel: string;
  id: string;
}

/** One line of chat input: a new message, an edit or a deletion. */
export type ChatOperation = { op: "add"; message: ChatMessage } | ChatEdit | ChatDeletion;

const CHAT_OPERATIONS = ["add", "edit", "delete"] as const;

/**
 * Validates one decoded JSON value as a chat operation, by its `op`: absent, null or `add`, a new
 * message ({@link parseChatMessage}); `edit`, `channel` (default as for a message), `id`, `text` (a
 * well-formed string) and `editedAt` (a timestamp like `ts`); `delete`, `channel` and `id`.
 * Other fields are ignored.
 *
 * @throws InvalidMessageError naming the first field at fault.
 */
export function parseChatOperation(
  value: unknown,
  options: { defaultChannel?: string } = {},
): ChatOperation {
  const record = value as Record<string, unknown> | null;
  const op = typeof record === "object" && record !== null ? record.op : undefined;
  if (op === undefined || op === null || op === "add") {
    return { op: "add", message: parseChatMessage(value, options) };
  }
  if (op !== "edit" && op !== "delete") {
    throw new InvalidMessageError(
      "op",
      `expected one of ${CHAT_OPERATIONS.join(", ")} (got ${kindOf(op)})`,
    );
  }
  const target = {
    channel: parseChannel(record?.channel, options.defaultChannel ?? DEFAULT_CHANNEL),
    id: parseId(record?.id),
  };
  if (op === "delete") return { op, ...target };
  const text = optionalText(record as Record<string, unknown>, "text");
  if (typeof text !== "string") {
    throw new InvalidMessageError("text", `an edit needs the new text (got ${kindOf(text)})`);
  }
  return { op, ...target, text, editedAt: parseTime(record?.editedAt, "editedAt") };
}

/** The kind a line names with `kind`, or with `system: true`; the two must agree. */
function parseKind(kind: unknown, system: unknown): MessageKind {
  if (system !== undefined && system !== null && typeof system !== "boolean") {
    throw new InvalidMessageError("system", `expected true or false (got ${kindOf(system)})`);
  }
  if (kind === undefined || kind === null) return system === true ? "system" : "user";
  if (!MESSAGE_KINDS.includes(kind as MessageKind)) {
    throw new InvalidMessageError(
      "kind",
      `expected one of ${MESSAGE_KINDS.join(", ")} (got ${kindOf(kind)})`,
    );
  }
  if (system === true && kind !== "system") {
    throw new InvalidMessageError(
      "kind",
      `${kindOf(kind)} contradicts system: true (leave one out, or make them agree)`,
    );
  }
  return kind as MessageKind;
}

/** A message id (or a user id) in `field`: a non-empty, well-formed string, or a safe integer. */
/**
 * The message a line answers: an id, or a list of ids (the IRC annotations' form, a line's
 * parents), of which the earliest other than the message itself (the smallest, when all are
 * integers; else the first). A message naming itself (the annotations' mark of a conversation's
 * start) answers none: ignored, never an error, as the segmenter ignores it.
 */
function parseReplyTo(value: unknown, id: string): string | undefined {
  const ids = (Array.isArray(value) ? value : [value]).map((v, i) =>
    parseId(v, Array.isArray(value) ? `replyTo[${i}]` : "replyTo"),
  );
  const others = ids.filter((other) => other !== id);
  if (others.length === 0) return undefined;
  const numeric = others.every((other) => /^-?\d+$/.test(other));
  return numeric ? others.reduce((a, b) => (Number(b) < Number(a) ? b : a)) : others[0];
}

function parseId(value: unknown, field = "id"): string {
  if (typeof value === "string" && value.length > 0) {
    const problem = messageIdProblem(value);
    if (problem !== undefined)
      throw new InvalidMessageError(field, `${problem} (got ${kindOf(value)})`);
    return value;
  }
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  throw new InvalidMessageError(
    field,
    `expected a non-empty string or an integer (got ${kindOf(value)})`,
  );
}

const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Epoch milliseconds of an ISO-8601 date-time with a zone (`2024-05-01T12:00:00Z`,
 * `2024-05-01T14:00:00.250+02:00`; fractions beyond milliseconds are truncated) or of epoch
 * milliseconds given as a number or a string of digits.
 */
export function parseTimestamp(value: unknown): number {
  return parseTime(value, "ts");
}

function parseTime(value: unknown, field: string): number {
  let ms: number | undefined;
  if (typeof value === "number" || (typeof value === "string" && /^-?\d+$/.test(value))) {
    ms = Number.isFinite(Number(value)) ? Number(value) : undefined;
  } else if (typeof value === "string") {
    ms = parseIsoDateTime(value);
  }
  if (ms === undefined) {
    throw new InvalidMessageError(
      field,
      `expected an ISO-8601 date-time with a time zone or epoch milliseconds (got ${kindOf(value)})`,
    );
  }
  if (!isAcceptedTimestamp(ms)) {
    throw new InvalidMessageError(
      field,
      `outside the accepted window 1970-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z (got ${kindOf(value)})`,
    );
  }
  return ms;
}

function parseIsoDateTime(text: string): number | undefined {
  const match = ISO_DATE_TIME.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second = "0", fraction = "", zone] = match;
  const fields = [year, month, day, hour, minute, second].map(Number);
  const [y, mo, d, h, mi, s] = fields;
  const ms = Number(fraction.slice(0, 3).padEnd(3, "0"));
  const utc = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const check = new Date(utc);
  const valid =
    check.getUTCFullYear() === y &&
    check.getUTCMonth() === mo - 1 &&
    check.getUTCDate() === d &&
    check.getUTCHours() === h &&
    check.getUTCMinutes() === mi &&
    check.getUTCSeconds() === s;
  const offset = zoneOffsetMs(zone);
  if (!valid || offset === undefined) return undefined;
  return utc - offset;
}

/** The offset of a zone designator (`Z`, `+02:00`): hours 00 to 23, minutes 00 to 59. */
function zoneOffsetMs(zone: string): number | undefined {
  if (zone === "Z" || zone === "z") return 0;
  const sign = zone[0] === "-" ? -1 : 1;
  const hours = Number(zone.slice(1, 3));
  const minutes = Number(zone.slice(4, 6));
  if (hours > 23 || minutes > 59) return undefined;
  return sign * (hours * 60 + minutes) * 60_000;
}

function parseChannel(value: unknown, fallback: string): string {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "string") {
    throw new InvalidMessageError("channel", `expected a string (got ${kindOf(value)})`);
  }
  const problem = conversationIdProblem(value);
  if (problem !== undefined) {
    throw new InvalidMessageError("channel", `${problem} (got ${kindOf(value)})`);
  }
  return value;
}

function optionalText(record: Record<string, unknown>, field: string): string | null | undefined {
  const value = record[field];
  if (typeof value === "string") {
    const at = loneSurrogateAt(value);
    if (at >= 0) {
      throw new InvalidMessageError(field, `not well-formed UTF-16: lone surrogate at index ${at}`);
    }
    return value;
  }
  if (value === undefined || value === null) return value;
  throw new InvalidMessageError(field, `expected a string or null (got ${kindOf(value)})`);
}

/** A short, safe description of an unexpected value for an error message. */
function kindOf(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "string") {
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  }
  if (typeof value === "number" || typeof value === "boolean" || value === null) {
    return String(value);
  }
  return Array.isArray(value) ? "an array" : `an ${typeof value}`;
}
