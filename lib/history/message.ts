import { MAX_DATE_MS, messageIdProblem, PLATFORM_PLACE_SHAPES } from "../base/identity/index.js";
import { InvalidMessageError } from "./errors.js";

/**
 * convoseg's message type: what a history store keeps. It serves both uses of the store: chat
 * platform messages (a user's post in a channel: role `user`, a text part, and the platform's
 * `id`, `ts` and `author`), and the turns of a conversation with a chat model (system, user,
 * assistant and tool messages with their parts), which the middleware replays and persists.
 */
export type Role = "system" | "user" | "assistant" | "tool";

/**
 * What kind of chat message: a person's (`user`), a bot's (`bot`), or the platform's own line
 * (`system`: a join, part, quit, nick, mode or topic change). Stored and segmented alike; extraction
 * shows `system` lines to no extractor by default. A message without a kind is a `user` message.
 */
export type MessageKind = "user" | "bot" | "system";

export const MESSAGE_KINDS: readonly MessageKind[] = ["user", "bot", "system"];

/** A message's kind: `user` when it names none (every message stored before kinds existed). */
export function kindOf(message: { kind?: MessageKind }): MessageKind {
  return message.kind ?? "user";
}

type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type Metadata = { [key: string]: JsonValue };

export type Part =
  | { type: "text"; text: string; metadata?: Metadata }
  | { type: "reasoning"; text: string; metadata?: Metadata }
  | { type: "tool-call"; id: string; name: string; arguments: string; metadata?: Metadata }
  | { type: "tool-result"; callId: string; name: string; result: string; metadata?: Metadata }
  | { type: "media"; mimeType: string; data: Uint8Array; metadata?: Metadata };

/**
 * The optional platform fields of a chat message, each a non-empty string when present: the
 * author's stable platform id (`userId`; `author` stays the display name), the message it answers
 * (`replyTo`, same channel), its thread's root (`thread`), the platform's name, the channel's
 * display name, and what the platform's link to it needs besides its ids: the Discord guild
 * (`guild`) and a public Telegram group's or channel's username (`chatUsername`, without the
 * `@`). Stored as given; additive within every v1 schema (readers ignore what they do not know).
 */
export const PLATFORM_FIELDS = [
  "userId",
  "replyTo",
  "thread",
  "platform",
  "channelName",
  "guild",
  "chatUsername",
] as const;
type PlatformField = (typeof PLATFORM_FIELDS)[number];
export type PlatformFields = { [F in PlatformField]?: string };

/**
 * The platform fields `from` carries, copied onto `to`; one `from` has not, or has empty (not
 * known), is left unset.
 */
export function copyPlatformFields(from: PlatformFields, to: PlatformFields): void {
  for (const field of PLATFORM_FIELDS) {
    const value = from[field];
    if (value !== undefined && value !== "") to[field] = value;
  }
}

export interface Message extends PlatformFields {
  role: Role;
  parts: Part[];
  metadata?: Metadata;
  /** Platform message id; a store keeps one message per (conversation, id). */
  id?: string;
  /** Platform timestamp, epoch milliseconds: what the segmenter orders by. */
  ts?: number;
  /** Platform user who wrote it. */
  author?: string;
  /** The chat message's kind; absent means `user` (see {@link MessageKind}). */
  kind?: MessageKind;
  /**
   * The message this one answers as the reply linker inferred it (`docs/conversations.md`), apart
   * from the platform's own `replyTo`: set by the segmentation tick, never by a write.
   */
  inferredReplyTo?: string;
  /** When the platform last edited it, epoch ms: set by an `Editor` edit, never by a write. */
  editedAt?: number;
  /**
   * Set by an `Editor` deletion, never by a write: the message keeps its id, timestamp and kind,
   * and has no parts, author or metadata. Only `getMessages` returns deleted messages.
   */
  deleted?: true;
}

const ROLES: readonly Role[] = ["system", "user", "assistant", "tool"];

/** A message with one text part. */
export function textMessage(
  role: Role,
  text: string,
  fields: Omit<Message, "role" | "parts"> = {},
): Message {
  return { ...fields, role, parts: [{ type: "text", text }] };
}

/**
 * What is left of a deleted message: its id, timestamp, kind and edit time, and where it stood
 * by id (`replyTo`, `thread`, `platform`, and the `guild` or public group's `chatUsername` its
 * channel's every message carries: nobody's), no content and nothing of its author (neither
 * `author` nor `userId`). Nor `channelName`: a private chat is named after the person in it
 * (Telegram's), and the channel's other messages carry its name.
 */
export function redacted(message: Message): Message {
  const kept: Message = { role: message.role, parts: [], deleted: true };
  const { userId: _userId, channelName: _channelName, ...structure } = platformFieldsOf(message);
  Object.assign(kept, structure);
  if (message.id !== undefined) kept.id = message.id;
  if (message.ts !== undefined) kept.ts = message.ts;
  if (message.kind !== undefined) kept.kind = message.kind;
  if (message.editedAt !== undefined) kept.editedAt = message.editedAt;
  if (message.inferredReplyTo !== undefined) kept.inferredReplyTo = message.inferredReplyTo;
  return kept;
}

/** The platform fields of a message, alone. */
function platformFieldsOf(message: PlatformFields): PlatformFields {
  const fields: PlatformFields = {};
  copyPlatformFields(message, fields);
  return fields;
}

/** The text parts of a message, concatenated. */
export function messageText(message: Message): string {
  let text = "";
  for (const part of message.parts) if (part.type === "text") text += part.text;
  return text;
}

/** An independent deep copy: later changes to either side do not reach the other. */
export function cloneMessage(message: Message): Message {
  return structuredClone(message);
}

/**
 * Throws an {@link InvalidMessageError} naming the first field at fault: the role; the parts (at
 * least one, each well formed, tool calls only from the assistant, tool results only in tool
 * messages); JSON metadata; and the optional platform fields (`id` a non-empty, well-formed string, `ts`
 * finite epoch milliseconds within the Date range, `author` a string, `kind` one of
 * {@link MESSAGE_KINDS}, `editedAt` epoch milliseconds, each of {@link PLATFORM_FIELDS} a
 * non-empty, well-formed string, `guild` and `chatUsername` of their `PLATFORM_PLACE_SHAPES`). A
 * deleted message has no parts, so it
 * is not valid: it is what a store reports, never what anyone writes.
 */
export function validateMessage(message: unknown): asserts message is Message {
  if (typeof message !== "object" || message === null) {
    throw new InvalidMessageError("message", "expected an object");
  }
  const m = message as Partial<Message>;
  if (!ROLES.includes(m.role as Role)) {
    throw new InvalidMessageError("role", `expected one of ${ROLES.join(", ")}`);
  }
  if (!Array.isArray(m.parts) || m.parts.length === 0) {
    throw new InvalidMessageError("parts", "a message needs at least one part");
  }
  m.parts.forEach((part, i) => {
    validatePart(part, m.role as Role, `parts[${i}]`);
  });
  if (m.metadata !== undefined) validateMetadata(m.metadata, "metadata");
  if (m.id !== undefined) {
    if (typeof m.id !== "string")
      throw new InvalidMessageError("id", "expected a non-empty string");
    const problem = messageIdProblem(m.id);
    if (problem === "empty") throw new InvalidMessageError("id", "expected a non-empty string");
    if (problem !== undefined) throw new InvalidMessageError("id", problem);
  }
  if (
    m.ts !== undefined &&
    (typeof m.ts !== "number" || !Number.isFinite(m.ts) || Math.abs(m.ts) > MAX_DATE_MS)
  ) {
    throw new InvalidMessageError("ts", "expected finite epoch milliseconds");
  }
  if (m.author !== undefined && typeof m.author !== "string") {
    throw new InvalidMessageError("author", "expected a string");
  }
  if (m.kind !== undefined && !MESSAGE_KINDS.includes(m.kind)) {
    throw new InvalidMessageError("kind", `expected one of ${MESSAGE_KINDS.join(", ")}`);
  }
  for (const field of PLATFORM_FIELDS) {
    const value = m[field];
    if (value === undefined) continue;
    if (typeof value !== "string" || value === "") {
      throw new InvalidMessageError(field, "expected a non-empty string");
    }
    if (!value.isWellFormed()) throw new InvalidMessageError(field, "expected well-formed UTF-16");
    const shape = (PLATFORM_PLACE_SHAPES as Partial<Record<PlatformField, RegExp>>)[field];
    if (shape !== undefined && !shape.test(value)) {
      throw new InvalidMessageError(field, `expected the shape ${shape.source}`);
    }
  }
  if (
    m.editedAt !== undefined &&
    (typeof m.editedAt !== "number" ||
      !Number.isFinite(m.editedAt) ||
      Math.abs(m.editedAt) > MAX_DATE_MS)
  ) {
    throw new InvalidMessageError("editedAt", "expected finite epoch milliseconds");
  }
}

function validatePart(part: unknown, role: Role, field: string): void {
  if (typeof part !== "object" || part === null) {
    throw new InvalidMessageError(field, "expected an object");
  }
  const p = part as Part;
  const text = (name: string, value: unknown, nonEmpty: boolean) => {
    if (typeof value !== "string" || (nonEmpty && value === "")) {
      throw new InvalidMessageError(
        `${field}.${name}`,
        `expected a ${nonEmpty ? "non-empty " : ""}string`,
      );
    }
  };
  switch (p.type) {
    case "text":
    case "reasoning":
      text("text", p.text, false);
      break;
    case "tool-call":
      if (role !== "assistant")
        throw new InvalidMessageError(field, "only an assistant message can call a tool");
      text("id", p.id, true);
      text("name", p.name, true);
      text("arguments", p.arguments, false);
      break;
    case "tool-result":
      if (role !== "tool")
        throw new InvalidMessageError(field, "a tool result belongs in a tool message");
      text("callId", p.callId, true);
      text("name", p.name, false);
      text("result", p.result, false);
      break;
    case "media":
      text("mimeType", p.mimeType, true);
      if (!(p.data instanceof Uint8Array)) {
        throw new InvalidMessageError(`${field}.data`, "expected a Uint8Array");
      }
      break;
    default:
      throw new InvalidMessageError(
        `${field}.type`,
        "expected text, reasoning, tool-call, tool-result or media",
      );
  }
  if (p.metadata !== undefined) validateMetadata(p.metadata, `${field}.metadata`);
}

function validateMetadata(value: unknown, field: string): void {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidMessageError(field, "expected a JSON object");
  }
  if (!isJson(value)) throw new InvalidMessageError(field, "expected plain JSON values");
}

function isJson(value: unknown): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJson);
  if (typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return false;
  return Object.values(value).every(isJson);
}

/**
 * Validates a whole batch before anything is stored, naming the failing index
 * (`messages[3].parts[0].text`), and returns deep copies the caller can no longer change. An
 * `editedAt` is refused: only an `Editor` edit sets it, against the stored version.
 */
export function snapshotBatch(messages: readonly Message[]): Message[] {
  return messages.map((message, i) => {
    try {
      validateMessage(message);
      if (message.editedAt !== undefined) {
        throw new InvalidMessageError(
          "editedAt",
          "set by an edit (Editor.change), not by a write: leave it out",
        );
      }
    } catch (error) {
      if (error instanceof InvalidMessageError) {
        throw new InvalidMessageError(`messages[${i}].${error.field}`, error.reason);
      }
      throw error;
    }
    return cloneMessage(message);
  });
}
