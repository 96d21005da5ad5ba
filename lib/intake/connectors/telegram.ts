/**
 * Telegram Bot API webhooks: the secret token check (`X-Telegram-Bot-Api-Secret-Token`, the
 * `secret_token` given to setWebhook; Telegram has no request signature), the `Update` envelope,
 * and a message or channel post as an ingest line, in the ids and text the Telegram export reader
 * gives (lib/intake/exports), so that an imported chat continues live under the same ids.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { ChatMessageInput } from "../ingest/index.js";
import { ConnectorError } from "./errors.js";
import { header, type IngestLine, type RequestHeaders } from "./receive.js";

const TELEGRAM_TOKEN_HEADER = "X-Telegram-Bot-Api-Secret-Token";

/**
 * Throws a {@link ConnectorError} unless the request carries the webhook's secret token. Both
 * are hashed first, so the comparison is constant-time whatever their lengths.
 */
export function verifyTelegramRequest(headers: RequestHeaders, secretToken: string): void {
  const given = header(headers, TELEGRAM_TOKEN_HEADER);
  if (given === undefined) {
    throw new ConnectorError("CONNECTOR_HEADER_MISSING", TELEGRAM_TOKEN_HEADER, "missing");
  }
  const digest = (value: string) => createHash("sha256").update(value).digest();
  if (!timingSafeEqual(digest(given), digest(secretToken))) {
    throw new ConnectorError(
      "CONNECTOR_BAD_SIGNATURE",
      TELEGRAM_TOKEN_HEADER,
      "is not the webhook's secret token",
    );
  }
}

/** The fields of a Bot API `Message` that are read. */
interface TelegramMessage {
  message_id?: unknown;
  message_thread_id?: unknown;
  is_topic_message?: unknown;
  date?: unknown;
  edit_date?: unknown;
  chat?: {
    id?: unknown;
    title?: unknown;
    username?: unknown;
    first_name?: unknown;
    last_name?: unknown;
  };
  from?: TelegramUser;
  sender_chat?: { id?: unknown; title?: unknown };
  author_signature?: unknown;
  reply_to_message?: { message_id?: unknown };
  text?: unknown;
  caption?: unknown;
  entities?: unknown;
  caption_entities?: unknown;
  photo?: unknown;
  sticker?: { emoji?: unknown };
  document?: { file_name?: unknown };
  audio?: { file_name?: unknown };
  video?: { file_name?: unknown };
  voice?: unknown;
  poll?: { question?: unknown };
  new_chat_members?: TelegramUser[];
  left_chat_member?: TelegramUser;
  new_chat_title?: unknown;
  pinned_message?: unknown;
  forum_topic_created?: { name?: unknown };
  [field: string]: unknown;
}

interface TelegramUser {
  id?: unknown;
  is_bot?: unknown;
  first_name?: unknown;
  last_name?: unknown;
  username?: unknown;
}

export interface TelegramUpdate {
  updateId: number;
  /** The update's one message, and whether it is an edit of one. */
  message?: TelegramMessage;
  edited: boolean;
}

/** The update of a verified body; a {@link ConnectorError} naming the field at fault. */
export function parseTelegramUpdate(rawBody: Buffer | string): TelegramUpdate {
  let value: unknown;
  try {
    value = JSON.parse(rawBody.toString());
  } catch {
    throw new ConnectorError("CONNECTOR_MALFORMED_BODY", "body", "not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConnectorError("CONNECTOR_MALFORMED_BODY", "body", "not a JSON object");
  }
  const update = value as Record<string, unknown>;
  const id = update.update_id;
  if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 0) {
    throw new ConnectorError("CONNECTOR_MALFORMED_BODY", "update_id", "expected an integer >= 0");
  }
  for (const [field, edited] of [
    ["message", false],
    ["channel_post", false],
    ["edited_message", true],
    ["edited_channel_post", true],
  ] as const) {
    const message = update[field];
    if (typeof message === "object" && message !== null) {
      return { updateId: id, message: message as TelegramMessage, edited };
    }
  }
  return { updateId: id, edited: false };
}

const word = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== "" ? value : undefined;
const integer = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isSafeInteger(value) ? value : undefined;

/** A person's name as the export writes `from`: first and last name, else the handle. */
const personName = (user: TelegramUser | undefined): string | undefined =>
  user === undefined
    ? undefined
    : (word([word(user.first_name), word(user.last_name)].filter(Boolean).join(" ")) ??
      word(user.username) ??
      (integer(user.id) === undefined ? undefined : String(user.id)));

/** The export's `from_id` form: `user123`, `channel123` (a channel's bare peer id), `chat123`. */
function peerId(message: TelegramMessage): string | undefined {
  const user = integer(message.from?.id);
  if (user !== undefined) return `user${user}`;
  const chat = integer(message.sender_chat?.id);
  if (chat === undefined) return undefined;
  return chat < -1e12 ? `channel${-chat - 1e12}` : `chat${-chat}`;
}

/**
 * What ingestion is told of an update: one line (a message, a channel post, an edit of either)
 * or none (another update type, no text, a message without id or date).
 */
export function telegramUpdateLines(update: TelegramUpdate): IngestLine[] {
  const message = update.message;
  const chat = integer(message?.chat?.id);
  const id = integer(message?.message_id);
  if (message === undefined || chat === undefined || id === undefined) return [];
  const channel = String(chat);
  const messageId = `${chat}:${id}`;
  if (update.edited) {
    const editedAt = integer(message.edit_date);
    if (editedAt === undefined) return [];
    return [
      { op: "edit", channel, id: messageId, text: messageText(message), editedAt: editedAt * 1000 },
    ];
  }
  const date = integer(message.date);
  if (date === undefined) return [];
  const service = serviceText(message);
  const line: ChatMessageInput = {
    id: messageId,
    ts: date * 1000,
    channel,
    user:
      service !== undefined
        ? null
        : (personName(message.from) ??
          word(message.author_signature) ??
          word(message.sender_chat?.title) ??
          null),
    text: service ?? messageText(message),
    kind: service !== undefined ? "system" : message.from?.is_bot === true ? "bot" : "user",
    platform: "telegram",
  };
  const name =
    word(message.chat?.title) ??
    personName(message.chat as TelegramUser) ??
    word(message.chat?.username);
  if (name !== undefined) line.channelName = name;
  const userId = peerId(message);
  if (userId !== undefined) line.userId = userId;
  const topic = message.is_topic_message === true ? integer(message.message_thread_id) : undefined;
  if (topic !== undefined) line.thread = `${chat}:${topic}`;
  const reply = integer(message.reply_to_message?.message_id);
  // In a forum topic, a message that answers nothing still carries the topic's first message
  // as reply_to_message: that is its thread, not a reply.
  if (reply !== undefined && reply !== topic) line.replyTo = `${chat}:${reply}`;
  return [line];
}

/** The text or caption, its links with their address, then media as the export shows them. */
function messageText(message: TelegramMessage): string {
  const own =
    typeof message.text === "string"
      ? message.text
      : typeof message.caption === "string"
        ? message.caption
        : "";
  let out = withLinks(
    own,
    typeof message.text === "string" ? message.entities : message.caption_entities,
  );
  const add = (line: string) => {
    out += `${out ? "\n" : ""}${line}`;
  };
  if (message.photo !== undefined) add("[photo]");
  if (message.sticker !== undefined) {
    const emoji = word(message.sticker.emoji);
    add(`[sticker${emoji ? ` ${emoji}` : ""}]`);
  }
  for (const media of [message.document, message.audio, message.video]) {
    if (media !== undefined) add(word(media.file_name) ? `[file: ${media.file_name}]` : "[file]");
  }
  if (message.voice !== undefined) add("[voice message]");
  const question = word(message.poll?.question);
  if (question !== undefined) add(`[poll: ${question}]`);
  return out;
}

/** `text_link` entities as `label (url)`; offsets are UTF-16 units, as JavaScript strings are. */
function withLinks(text: string, entities: unknown): string {
  if (!Array.isArray(entities)) return text;
  const links = entities
    .filter(
      (e): e is { offset: number; length: number; url: string } =>
        e?.type === "text_link" &&
        integer(e.offset) !== undefined &&
        integer(e.length) !== undefined &&
        typeof e.url === "string",
    )
    .sort((a, b) => b.offset - a.offset);
  let out = text;
  for (const { offset, length, url } of links) {
    const end = offset + length;
    if (end > out.length) continue;
    out = `${out.slice(0, end)} (${url})${out.slice(end)}`;
  }
  return out;
}

/** A service message as the export's sentence (the actor, the action), else undefined. */
function serviceText(message: TelegramMessage): string | undefined {
  const actor = personName(message.from) ?? "someone";
  const names = (users: TelegramUser[]) => users.map(personName).filter(Boolean).join(", ");
  if (Array.isArray(message.new_chat_members))
    return `${actor} added ${names(message.new_chat_members)}`;
  if (message.left_chat_member !== undefined)
    return `${actor} removed ${names([message.left_chat_member])}`;
  if (word(message.new_chat_title))
    return `${actor} renamed the group to "${message.new_chat_title}"`;
  if (message.pinned_message !== undefined) return `${actor} pinned a message`;
  if (message.forum_topic_created !== undefined) {
    const name = word(message.forum_topic_created.name);
    return `${actor} created the topic${name ? ` "${name}"` : ""}`;
  }
  return undefined;
}
