/**
 * Telegram Desktop's `result.json`: one chat (`{name, type, id, messages}`) or a full export
 * (`chats.list`, `left_chats.list`), walked with the bounded JSON reader. Ids are
 * `<chat id>:<message id>`, with the chat id as the Bot API names it (`-100…` for supergroups and
 * channels, negative for basic groups) so that an import and the live connector share channels.
 * Times come from `date_unixtime`; only when it is missing is the zone-less `date` read in the
 * configured zone. A full export's chats are held until the file ends (they come in no id order).
 */
import { basename, dirname, resolve } from "node:path";
import { describe, type FileTally, type ReadContext, safeWord } from "./context.js";
import { ExportFormatError } from "./errors.js";
import { isoTimestamp } from "./ids.js";
import { inline } from "./inline.js";
import {
  type JsonPath,
  type JsonValueAt,
  jsonFileValues,
  parseValue,
  pathText,
  type Selection,
} from "./json-stream.js";
import { sortMessages } from "./order.js";
import { type TelegramService, telegramServiceText } from "./telegram-service.js";
import type { ExportMessage } from "./types.js";

const CHAT_FIELDS = new Set(["id", "name", "type"]);

/** The chat a path belongs to (`[]` for a one-chat export, `["chats","list",3]`), or undefined. */
function chatPrefix(path: JsonPath): number {
  if (path.length >= 3 && (path[0] === "chats" || path[0] === "left_chats") && path[1] === "list")
    return 3;
  return 0;
}

const select = (path: JsonPath): Selection => {
  const base = chatPrefix(path);
  if (base === 0) {
    if (path.length === 0) return "descend";
    if (path[0] === "chats" || path[0] === "left_chats")
      return path.length <= 2 && (path.length === 1 || path[1] === "list") ? "descend" : "skip";
  }
  if (path.length === base) return "descend";
  const key = path[base];
  if (path.length === base + 1)
    return CHAT_FIELDS.has(key as string) ? "capture" : key === "messages" ? "descend" : "skip";
  return key === "messages" && path.length === base + 2 ? "capture" : "skip";
};

interface Chat {
  prefix: string;
  id?: string;
  name?: string;
  type?: string;
  pending: JsonValueAt[];
}

export async function* readTelegram(
  input: string,
  context: ReadContext,
): AsyncGenerator<ExportMessage[]> {
  context.progress(input, 0, 1);
  const tally = context.file(input);
  const buffer: ExportMessage[] = [];
  let chat: Chat | undefined;
  const flush = (current: Chat) => {
    if (current.pending.length === 0) return;
    if (current.id === undefined && current.prefix === "(root)") {
      // Older exports and some tools write one chat's messages alone: its file names it.
      current.id = fileChatId(input);
      context.note(
        `Telegram: ${input} names no chat id; its messages are stored as channel ${current.id}, made from the file's name (import it under the same name to add to that channel)`,
      );
    }
    if (current.id === undefined) {
      throw new ExportFormatError(
        input,
        current.prefix,
        "id",
        "missing: a chat with messages needs its id",
      );
    }
    for (const value of current.pending) {
      const message = telegramMessage(
        parseValue(value, input),
        current,
        tally,
        pathText(value.path),
      );
      if (message) {
        buffer.push(message);
        tally.taken();
      }
    }
    current.pending = [];
  };
  for await (const value of jsonFileValues(input, input, select)) {
    const base = chatPrefix(value.path);
    const prefix = pathText(value.path.slice(0, base));
    if (chat === undefined || chat.prefix !== prefix) {
      if (chat) flush(chat);
      chat = { prefix, pending: [] };
    }
    const key = value.path[base];
    if (key === "messages") {
      chat.pending.push(value);
      if (chat.id !== undefined) flush(chat);
      continue;
    }
    const field = parseValue(value, input);
    if (key === "id") {
      if (typeof field !== "number" || !Number.isSafeInteger(field)) {
        throw new ExportFormatError(
          input,
          chat.prefix,
          "id",
          `expected an integer (got ${describe(field)})`,
        );
      }
      chat.id = String(botApiChatId(field, chat.type));
    } else if (typeof field === "string") {
      if (key === "name") chat.name = field;
      else {
        chat.type = field;
        if (chat.id !== undefined && !chat.id.startsWith("-"))
          chat.id = String(botApiChatId(Number(chat.id), field));
      }
    }
    if (chat.id !== undefined) flush(chat);
  }
  if (chat) flush(chat);
  if (tally.report.messages === 0 && chat === undefined) {
    throw new ExportFormatError(
      input,
      "(root)",
      "messages",
      "missing: neither one chat's messages nor chats.list",
    );
  }
  yield sortMessages(buffer);
}

/**
 * A chat id for a one-chat export without one, stable across imports of the same file: its name,
 * with its folder's when the name is Telegram Desktop's `result.json` (every export's), as
 * lowercase letters, digits and dashes behind `file-`; never a number, so never a real chat's.
 */
function fileChatId(input: string): string {
  const name = basename(input).replace(/\.json$/i, "");
  const named =
    name.toLowerCase() === "result" ? `${basename(dirname(resolve(input)))}-${name}` : name;
  const slug = named
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64)
    .replace(/-+$/, "");
  return `file-${slug === "" ? "chat" : slug}`;
}

/** The chat's id as the Bot API gives it: exports write the bare peer id. */
function botApiChatId(id: number, type: string | undefined): number {
  if (id <= 0) return id;
  if (type === "private_group") return -id;
  if (type !== undefined && /supergroup|channel/.test(type)) return -(1e12 + id);
  return id;
}

interface TelegramRaw {
  id?: unknown;
  type?: unknown;
  date?: unknown;
  date_unixtime?: unknown;
  from?: unknown;
  from_id?: unknown;
  actor?: unknown;
  actor_id?: unknown;
  action?: unknown;
  title?: unknown;
  new_title?: unknown;
  members?: unknown;
  duration?: unknown;
  period?: unknown;
  schedule_date?: unknown;
  boosts?: unknown;
  winners?: unknown;
  author?: unknown;
  text?: unknown;
  reply_to_message_id?: unknown;
  reply_to_peer_id?: unknown;
  photo?: unknown;
  file?: unknown;
  file_name?: unknown;
  media_type?: unknown;
  sticker_emoji?: unknown;
  poll?: { question?: unknown };
  contact_information?: { first_name?: unknown; last_name?: unknown } | null;
  location_information?: unknown;
  place_name?: unknown;
  game_title?: unknown;
  invoice_information?: { title?: unknown } | null;
}

function telegramMessage(
  value: unknown,
  chat: Chat,
  tally: FileTally,
  at: string,
): ExportMessage | undefined {
  const raw = tally.record<TelegramRaw>(value, at);
  if (raw === undefined) return undefined;
  const chatId = chat.id as string;
  if (typeof raw.id !== "number" || !Number.isSafeInteger(raw.id)) {
    tally.skip(at, "id", `expected an integer (got ${describe(raw.id)})`);
    return undefined;
  }
  if (raw.type !== "message" && raw.type !== "service") {
    tally.skip(at, "type", `not a message (type ${safeWord(raw.type)})`);
    return undefined;
  }
  const ts = telegramTime(raw, tally.context, at, tally);
  if (ts === undefined) return undefined;
  const service = raw.type === "service";
  const author = text(raw.from) ?? text(raw.from_id);
  if (!service && author === undefined) {
    tally.skip(at, "from", "no author: a message names from or from_id");
    return undefined;
  }
  const message: ExportMessage = {
    id: `${chatId}:${raw.id}`,
    ts,
    channel: chatId,
    channelName: chat.name || (chat.type === "saved_messages" ? "Saved Messages" : chatId),
    user: service ? null : signed(author as string, raw),
    text: service ? serviceText(raw, chat) : messageText(raw),
  };
  const userId = text(service ? raw.actor_id : raw.from_id);
  if (userId !== undefined) message.userId = userId;
  if (
    typeof raw.reply_to_message_id === "number" &&
    Number.isSafeInteger(raw.reply_to_message_id) &&
    raw.reply_to_peer_id === undefined
  ) {
    message.replyTo = `${chatId}:${raw.reply_to_message_id}`;
  }
  const bot = chat.type === "bot_chat" && userId === `user${chatId}`;
  message.kind = service ? "system" : bot ? "bot" : "user";
  message.platform = "telegram";
  return message;
}

/**
 * The author as the live connector names it: a post as a chat (a channel's post, an anonymous
 * group admin's message, `from_id` a `channel…`) is the chat's name with the signature of who
 * wrote it, `Help desk (Grace)`.
 */
function signed(author: string, raw: TelegramRaw): string {
  const signature = text(raw.author);
  if (signature === undefined || !String(raw.from_id).startsWith("channel")) return author;
  return `${author} (${inline(signature)})`;
}

/** `date_unixtime` (a string of seconds), else the zone-less `date` in the configured zone. */
function telegramTime(
  raw: TelegramRaw,
  context: ReadContext,
  at: string,
  tally: FileTally,
): string | undefined {
  const unix = raw.date_unixtime;
  if (typeof unix === "string" && /^\d{1,12}$/.test(unix)) {
    const ts = isoTimestamp(Number(unix) * 1000);
    if (ts !== undefined) return ts;
  }
  const match =
    typeof raw.date === "string"
      ? /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/.exec(raw.date)
      : null;
  if (!match) {
    tally.skip(
      at,
      "date_unixtime",
      `expected a string of unix seconds, or a date (got ${describe(unix)})`,
    );
    return undefined;
  }
  const [y, mo, d, h, mi, s] = match.slice(1).map(Number);
  const ts = isoTimestamp(context.wallClock(y, mo, d, h, mi, s));
  if (ts === undefined) {
    tally.skip(at, "date", "outside the accepted timestamps");
    return undefined;
  }
  context.zoneless();
  return ts;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** `text` as a string or an array of strings and entities: links keep their address. */
function entitiesText(value: unknown): string {
  if (typeof value === "string") return value;
  if (!Array.isArray(value)) return "";
  let out = "";
  for (const part of value) {
    if (typeof part === "string") out += part;
    else if (typeof part === "object" && part !== null) {
      const { text: t, href } = part as { text?: unknown; href?: unknown };
      const shown = typeof t === "string" ? t : "";
      out +=
        typeof href === "string" && href !== "" && href !== shown ? `${shown} (${href})` : shown;
    }
  }
  return out;
}

function messageText(raw: TelegramRaw): string {
  let out = entitiesText(raw.text);
  const add = (line: string) => {
    out += `${out ? "\n" : ""}${line}`;
  };
  if (raw.photo !== undefined) add("[photo]");
  if (raw.media_type === "sticker")
    add(`[sticker${typeof raw.sticker_emoji === "string" ? ` ${inline(raw.sticker_emoji)}` : ""}]`);
  else if (raw.file !== undefined || raw.file_name !== undefined) {
    const name =
      text(raw.file_name) ??
      (typeof raw.file === "string" && !raw.file.startsWith("(")
        ? raw.file.split("/").pop()
        : undefined);
    add(
      name
        ? `[file: ${inline(name)}]`
        : `[${typeof raw.media_type === "string" ? safeWord(raw.media_type).replace(/_/g, " ") : "file"}]`,
    );
  }
  if (typeof raw.poll?.question === "string") add(`[poll: ${inline(raw.poll.question)}]`);
  // As the live connector shows the same content (a contact by its name, never its number).
  const contact = raw.contact_information;
  if (contact !== undefined && contact !== null) {
    const name = [text(contact.first_name), text(contact.last_name)].filter(Boolean).join(" ");
    add(name ? `[contact: ${inline(name)}]` : "[contact]");
  }
  const place = text(raw.place_name);
  if (place !== undefined) add(`[place: ${inline(place)}]`);
  else if (raw.location_information !== undefined) add("[location]");
  const game = text(raw.game_title);
  if (game !== undefined) add(`[game: ${inline(game)}]`);
  if (raw.invoice_information !== undefined) {
    const title = text(raw.invoice_information?.title);
    add(title ? `[invoice: ${inline(title)}]` : "[invoice]");
  }
  return out === "" ? "[unsupported message]" : out;
}

/** A number the export wrote as a number or a string of digits. */
function count(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isSafeInteger(value)) return value;
  if (typeof value === "string" && /^\d{1,15}$/.test(value)) return Number(value);
  return undefined;
}

/**
 * A service message as a sentence: its text when it has one, else the actor and the action in
 * the wording the live connector shares ({@link telegramServiceText}). An action without an actor
 * in a channel is the channel's.
 */
function serviceText(raw: TelegramRaw, chat: Chat): string {
  const own = entitiesText(raw.text);
  if (own !== "") return own;
  const members = Array.isArray(raw.members)
    ? raw.members.filter((m): m is string => typeof m === "string")
    : [];
  const actor =
    text(raw.actor) ??
    (chat.type !== undefined && /channel/.test(chat.type) ? text(chat.name) : undefined);
  const action = typeof raw.action === "string" ? raw.action : "";
  const event: TelegramService = {
    action,
    members,
    ...(actor === undefined ? {} : { actor }),
  };
  const title = text(raw.title) ?? text(raw.new_title);
  if (title !== undefined) event.title = title;
  const seconds = count(action === "set_messages_ttl" ? raw.period : raw.duration);
  if (seconds !== undefined) event.seconds = seconds;
  const date = count(raw.schedule_date);
  if (date !== undefined) event.date = date;
  const n = count(action === "boost_apply" ? raw.boosts : raw.winners);
  if (n !== undefined) event.count = n;
  return telegramServiceText(event);
}
