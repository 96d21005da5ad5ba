/**
 * A chat message as convoseg's inputs carry it (JSON lines, ingestion batches), its validation,
 * and the one order every part of the product uses: platform timestamp, then message id.
 */

import { validateConversationId } from "../history/conversation-id.js";
import { InvalidConversationIdError } from "../history/errors.js";

/** Channel of a message that names none. */
export const DEFAULT_CHANNEL = "default";

/** The largest epoch-millisecond magnitude a JavaScript Date (and ISO-8601 output) can carry. */
const MAX_EPOCH_MS = 8.64e15;

export interface ChatMessage {
  /** Platform message id, unique within its channel (numbers are accepted and kept as strings). */
  id: string;
  /** Platform timestamp, epoch milliseconds. */
  ts: number;
  channel: string;
  user?: string | null;
  text?: string | null;
}

/** A message field that is missing or malformed. */
export class InvalidMessageError extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field}: ${problem}`);
    this.name = "InvalidMessageError";
  }
}

/**
 * Validates one decoded JSON value as a chat message: `id` (non-empty string or safe integer),
 * `ts` (ISO-8601 date-time with a zone, or epoch milliseconds as a number or digit string),
 * optional `channel` (a valid conversation id, default {@link DEFAULT_CHANNEL}), optional `user` and
 * `text` (string or null). Other fields are ignored.
 *
 * @throws InvalidMessageError naming the first field at fault.
 */
export function parseChatMessage(value: unknown): ChatMessage {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidMessageError("message", `expected a JSON object (got ${kindOf(value)})`);
  }
  const record = value as Record<string, unknown>;
  const message: ChatMessage = {
    id: parseId(record.id),
    ts: parseTimestamp(record.ts),
    channel: parseChannel(record.channel),
  };
  const user = optionalText(record, "user");
  const text = optionalText(record, "text");
  if (user !== undefined) message.user = user;
  if (text !== undefined) message.text = text;
  return message;
}

/**
 * Orders messages by timestamp, then by id in UTF-8 byte order (code point order), so that the
 * order is total and independent of arrival order.
 */
export function compareMessages(a: ChatMessage, b: ChatMessage): number {
  return a.ts - b.ts || compareIds(a.id, b.id);
}

/** Compares two ids by code point, which is UTF-8 byte order (plain `<` compares UTF-16 units). */
export function compareIds(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(i) ?? 0;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

function parseId(value: unknown): string {
  if (typeof value === "string" && value.length > 0) return value;
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  throw new InvalidMessageError(
    "id",
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
  if (typeof value === "number" || (typeof value === "string" && /^-?\d+$/.test(value))) {
    const ms = Number(value);
    if (Number.isFinite(ms) && Math.abs(ms) <= MAX_EPOCH_MS) return ms;
  } else if (typeof value === "string") {
    const ms = parseIsoDateTime(value);
    if (ms !== undefined) return ms;
  }
  throw new InvalidMessageError(
    "ts",
    `expected an ISO-8601 date-time with a time zone or epoch milliseconds (got ${kindOf(value)})`,
  );
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
  if (!valid) return undefined;
  return utc - zoneOffsetMs(zone);
}

function zoneOffsetMs(zone: string): number {
  if (zone === "Z" || zone === "z") return 0;
  const sign = zone[0] === "-" ? -1 : 1;
  const hours = Number(zone.slice(1, 3));
  const minutes = Number(zone.slice(4, 6));
  return sign * (hours * 60 + minutes) * 60_000;
}

function parseChannel(value: unknown): string {
  if (value === undefined || value === null) return DEFAULT_CHANNEL;
  if (typeof value !== "string") {
    throw new InvalidMessageError("channel", `expected a string (got ${kindOf(value)})`);
  }
  try {
    validateConversationId(value);
  } catch (error) {
    if (error instanceof InvalidConversationIdError) {
      throw new InvalidMessageError("channel", `${error.reason} (got ${kindOf(value)})`);
    }
    throw error;
  }
  return value;
}

function optionalText(record: Record<string, unknown>, field: string): string | null | undefined {
  const value = record[field];
  if (value === undefined || value === null || typeof value === "string") return value;
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
