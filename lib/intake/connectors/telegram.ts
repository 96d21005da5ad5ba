/**
 * Telegram Bot API webhooks: the secret token check (`X-Telegram-Bot-Api-Secret-Token`, the
 * `secret_token` given to setWebhook; Telegram has no request signature), the `Update` envelope,
 * and a message or channel post as an ingest line, in the ids and text the Telegram export reader
 * gives (lib/intake/exports), so that an imported chat continues live under the same ids.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { PLATFORM_PLACE_SHAPES } from "../../base/identity/index.js";
import { inline, type TelegramService, telegramServiceText } from "../exports/index.js";
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
    /** private, group, supergroup or channel. */
    type?: unknown;
    title?: unknown;
    username?: unknown;
    first_name?: unknown;
    last_name?: unknown;
  };
  from?: TelegramUser;
  sender_chat?: { id?: unknown; title?: unknown; username?: unknown };
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
  dice?: { emoji?: unknown; value?: unknown };
  contact?: { first_name?: unknown; last_name?: unknown };
  venue?: { title?: unknown };
  game?: { title?: unknown };
  invoice?: { title?: unknown };
  new_chat_members?: TelegramUser[];
  left_chat_member?: TelegramUser;
  new_chat_title?: unknown;
  pinned_message?: unknown;
  forum_topic_created?: { name?: unknown };
  forum_topic_edited?: { name?: unknown };
  video_chat_scheduled?: { start_date?: unknown };
  video_chat_ended?: { duration?: unknown };
  video_chat_participants_invited?: { users?: unknown };
  message_auto_delete_timer_changed?: { message_auto_delete_time?: unknown };
  giveaway?: { winner_count?: unknown; prize_description?: unknown };
  giveaway_winners?: { winner_count?: unknown };
  giveaway_completed?: { winner_count?: unknown };
  boost_added?: { boost_count?: unknown };
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
const personName = (user: TelegramUser | null | undefined): string | undefined =>
  typeof user !== "object" || user === null
    ? undefined
    : (word([word(user.first_name), word(user.last_name)].filter(Boolean).join(" ")) ??
      word(user.username) ??
      (integer(user.id) === undefined ? undefined : String(user.id)));

/** The export's `from_id` form: `user123`, `channel123` (a channel's bare peer id), `chat123`. */
function peerId(message: TelegramMessage): string | undefined {
  // A message sent as a chat carries a stand-in user in `from` (GroupAnonymousBot, Channel_Bot).
  const chat = integer(message.sender_chat?.id);
  if (chat !== undefined) return chat < -1e12 ? `channel${-chat - 1e12}` : `chat${-chat}`;
  const user = integer(message.from?.id);
  return user === undefined ? undefined : `user${user}`;
}

/**
 * Who wrote a message: a person by name, or, for a message sent as a chat (a channel's post, an
 * anonymous group admin's, one sent as a linked channel), the chat's title with the author's
 * signature when there is one, `Help desk (Grace)`, as the export reader names the same message.
 */
function authorName(message: TelegramMessage): string | undefined {
  const chat = message.sender_chat;
  if (chat !== undefined && chat !== null) {
    const title = word(chat.title) ?? word(chat.username);
    const signature = word(message.author_signature);
    if (title === undefined) return signature === undefined ? undefined : inline(signature);
    return signature === undefined ? title : `${title} (${inline(signature)})`;
  }
  return personName(message.from);
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
    user: service !== undefined ? null : (authorName(message) ?? null),
    text: service ?? messageText(message),
    kind:
      service !== undefined
        ? "system"
        : message.sender_chat === undefined && message.from?.is_bot === true
          ? "bot"
          : "user",
    platform: "telegram",
  };
  const name =
    word(message.chat?.title) ??
    personName(message.chat as TelegramUser) ??
    word(message.chat?.username);
  if (name !== undefined) line.channelName = name;
  const username = message.chat?.username;
  // A public group's or channel's name makes its links (only a supergroup or channel has one); a
  // private chat's is the person's, and one not of a username's shape is left out.
  if (
    (message.chat?.type === "supergroup" || message.chat?.type === "channel") &&
    typeof username === "string" &&
    PLATFORM_PLACE_SHAPES.chatUsername.test(username)
  )
    line.chatUsername = username;
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
    const emoji = word(message.sticker?.emoji);
    add(`[sticker${emoji ? ` ${inline(emoji)}` : ""}]`);
  }
  for (const media of [message.document, message.audio, message.video]) {
    if (media !== undefined && media !== null)
      add(word(media.file_name) ? `[file: ${inline(media.file_name as string)}]` : "[file]");
  }
  if (message.voice !== undefined) add("[voice message]");
  if (message.video_note !== undefined) add("[video message]");
  const question = word(message.poll?.question);
  if (question !== undefined) add(`[poll: ${inline(question)}]`);
  if (message.dice !== undefined) {
    const emoji = word(message.dice?.emoji);
    const value = integer(message.dice?.value);
    add(`[dice${emoji ? ` ${inline(emoji)}` : ""}${value === undefined ? "" : ` ${value}`}]`);
  }
  if (message.story !== undefined) add("[story]");
  if (message.contact !== undefined) {
    // Its name only: a phone number is no chat text.
    const name = personName(message.contact as TelegramUser);
    add(name === undefined ? "[contact]" : `[contact: ${inline(name)}]`);
  }
  const place = word(message.venue?.title);
  if (message.venue !== undefined)
    add(place === undefined ? "[place]" : `[place: ${inline(place)}]`);
  else if (message.location !== undefined) add("[location]");
  const game = word(message.game?.title);
  if (message.game !== undefined) add(game === undefined ? "[game]" : `[game: ${inline(game)}]`);
  if (message.paid_media !== undefined) add("[paid media]");
  if (message.checklist !== undefined) add("[checklist]");
  if (message.invoice !== undefined) {
    const title = word(message.invoice?.title);
    add(title === undefined ? "[invoice]" : `[invoice: ${inline(title)}]`);
  }
  // Content of a kind this reader does not know: a line that says so, never an empty one.
  return out === "" ? "[unsupported message]" : out;
}

/**
 * `text_link` entities as `label (url)`; offsets are UTF-16 units, as JavaScript strings are.
 * Built in one pass over the links in order of where they end: inserting each into the whole
 * text made 20,000 entities take minutes. A URL is put inline (no line break or control, cut
 * long), as any name is: it is the sender's text.
 */
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
    .map(({ offset, length, url }) => ({ end: offset + length, url }))
    .filter(({ end }) => end >= 0 && end <= text.length)
    .sort((a, b) => a.end - b.end);
  if (links.length === 0) return text;
  const parts: string[] = [];
  let from = 0;
  for (const { end, url } of links) {
    parts.push(text.slice(from, end), ` (${inline(url)})`);
    from = end;
  }
  parts.push(text.slice(from));
  return parts.join("");
}

/** Bot API service fields with no detail, as the export's action (or the connector's own). */
const PLAIN_SERVICES: [field: string, action: string][] = [
  ["pinned_message", "pin_message"],
  ["new_chat_photo", "edit_group_photo"],
  ["delete_chat_photo", "delete_group_photo"],
  ["migrate_to_chat_id", "migrate_to_supergroup"],
  ["migrate_from_chat_id", "migrate_from_group"],
  ["forum_topic_closed", "topic_closed"],
  ["forum_topic_reopened", "topic_reopened"],
  ["general_forum_topic_hidden", "general_topic_hidden"],
  ["general_forum_topic_unhidden", "general_topic_unhidden"],
  ["video_chat_started", "group_call"],
  ["giveaway_created", "giveaway_launch"],
  ["chat_background_set", "set_chat_wallpaper"],
  ["write_access_allowed", "allow_sending_messages"],
  ["connected_website", "allow_sending_messages"],
  ["users_shared", "requested_peer"],
  ["chat_shared", "requested_peer"],
  ["successful_payment", "send_payment"],
  ["refunded_payment", "refunded_payment"],
  ["proximity_alert_triggered", "proximity_reached"],
  ["web_app_data", "send_webview_data"],
  ["gift", "send_gift"],
  ["unique_gift", "send_gift"],
  ["checklist_tasks_done", "checklist_tasks_done"],
  ["checklist_tasks_added", "checklist_tasks_added"],
  ["paid_message_price_changed", "paid_message_price_changed"],
  ["direct_message_price_changed", "direct_message_price_changed"],
];

/**
 * A service message as the sentence the export reader writes for the same event (the actor,
 * the action: {@link telegramServiceText}), else undefined for a message someone wrote.
 */
function serviceText(message: TelegramMessage): string | undefined {
  const event = serviceEvent(message);
  if (event === undefined) return undefined;
  const actor = authorName(message);
  return telegramServiceText(actor === undefined ? event : { ...event, actor });
}

const present = (value: unknown) => value !== undefined && value !== null && value !== false;
const users = (value: unknown): string[] =>
  Array.isArray(value)
    ? value.map((u) => personName(u as TelegramUser)).filter((n): n is string => n !== undefined)
    : [];

function serviceEvent(message: TelegramMessage): TelegramService | undefined {
  const number = (value: unknown) => {
    const n = integer(value);
    return n === undefined ? {} : { count: n };
  };
  if (Array.isArray(message.new_chat_members)) {
    return { action: "invite_members", members: users(message.new_chat_members) };
  }
  if (present(message.left_chat_member)) {
    return { action: "remove_members", members: users([message.left_chat_member]) };
  }
  const title = word(message.new_chat_title);
  if (title !== undefined) return { action: "edit_group_title", title };
  if (present(message.forum_topic_created)) {
    const name = word(message.forum_topic_created?.name);
    return { action: "topic_created", ...(name === undefined ? {} : { title: name }) };
  }
  if (present(message.forum_topic_edited)) {
    const name = word(message.forum_topic_edited?.name);
    return { action: "topic_edit", ...(name === undefined ? {} : { title: name }) };
  }
  if (present(message.group_chat_created) || present(message.supergroup_chat_created)) {
    const name = word(message.chat?.title);
    return { action: "create_group", ...(name === undefined ? {} : { title: name }) };
  }
  if (present(message.channel_chat_created)) {
    const name = word(message.chat?.title);
    return { action: "create_channel", ...(name === undefined ? {} : { title: name }) };
  }
  if (present(message.video_chat_scheduled)) {
    const date = integer(message.video_chat_scheduled?.start_date);
    return { action: "group_call_scheduled", ...(date === undefined ? {} : { date }) };
  }
  if (present(message.video_chat_ended)) {
    const seconds = integer(message.video_chat_ended?.duration) ?? 0;
    return { action: "group_call", seconds };
  }
  if (present(message.video_chat_participants_invited)) {
    return {
      action: "invite_to_group_call",
      members: users(message.video_chat_participants_invited?.users),
    };
  }
  if (present(message.message_auto_delete_timer_changed)) {
    const seconds = integer(message.message_auto_delete_timer_changed?.message_auto_delete_time);
    return { action: "set_messages_ttl", seconds: seconds ?? 0 };
  }
  if (present(message.giveaway)) {
    const prize = word(message.giveaway?.prize_description);
    return {
      action: "giveaway",
      ...number(message.giveaway?.winner_count),
      ...(prize === undefined ? {} : { title: prize }),
    };
  }
  if (present(message.giveaway_winners)) {
    return { action: "giveaway_results", ...number(message.giveaway_winners?.winner_count) };
  }
  if (present(message.giveaway_completed)) {
    return { action: "giveaway_completed", ...number(message.giveaway_completed?.winner_count) };
  }
  if (present(message.boost_added)) {
    return { action: "boost_apply", ...number(message.boost_added?.boost_count) };
  }
  for (const [field, action] of PLAIN_SERVICES) {
    if (present(message[field])) return { action };
  }
  return undefined;
}
