/**
 * Discord REST message objects (developers/resources/message) as ingestion lines: the same
 * choices as the DiscordChatExporter reader (`lib/intake/exports`), from the API's own field names.
 */
import type { ChatMessageInput } from "../../ingest/index.js";
import { isSnowflake } from "./snowflake.js";

/** The fields of a message object the poller reads. */
export interface DiscordMessage {
  id: string;
  type?: number;
  channel_id?: string;
  timestamp: string;
  edited_timestamp?: string | null;
  content?: string;
  author?: { id?: string; username?: string; global_name?: string | null; bot?: boolean };
  webhook_id?: string;
  attachments?: { filename?: string }[];
  sticker_items?: { name?: string }[];
  mentions?: { id?: string; username?: string; global_name?: string | null }[];
  message_reference?: { type?: number; message_id?: string; channel_id?: string };
  /** Absent: not fetched; null: the referenced message was deleted. */
  referenced_message?: DiscordMessage | null;
}

/** Types that are someone writing: DEFAULT, REPLY, CHAT_INPUT_COMMAND, CONTEXT_MENU_COMMAND. */
const AUTHORED_TYPES = new Set([0, 19, 20, 23]);
/** THREAD_STARTER_MESSAGE: a copy of the root, which is in the parent channel already. */
const THREAD_STARTER = 21;
/** `message_reference.type` FORWARD: a forward quotes, it does not answer. */
const FORWARD = 1;

/** Where messages of one polled source land: the channel, and the thread when it is one. */
export interface Destination {
  channel: string;
  channelName?: string;
  thread?: string;
}

/** The ingestion line of a message, or `undefined` for one that is not kept (a thread starter). */
export function chatMessage(
  message: DiscordMessage,
  to: Destination,
): ChatMessageInput | undefined {
  const type = message.type ?? 0;
  if (type === THREAD_STARTER) return undefined;
  const system = !AUTHORED_TYPES.has(type);
  const author = message.author ?? {};
  const name = [author.global_name, author.username].find(
    (n): n is string => typeof n === "string" && n !== "",
  );
  const line: ChatMessageInput = {
    id: message.id,
    ts: message.timestamp,
    channel: to.channel,
    user: system ? null : (name ?? author.id ?? null),
    text: messageText(message),
    kind: system ? "system" : author.bot === true || message.webhook_id ? "bot" : "user",
    platform: "discord",
  };
  if (isSnowflake(author.id)) line.userId = author.id;
  if (to.channelName !== undefined) line.channelName = to.channelName;
  if (to.thread !== undefined && message.id !== to.thread) line.thread = to.thread;
  const reference = message.message_reference;
  // Kept when the referenced message was deleted (`referenced_message: null`): the reply still
  // answered it, and the store keeps the deleted one's place.
  if (
    reference !== undefined &&
    (reference.type ?? 0) !== FORWARD &&
    isSnowflake(reference.message_id) &&
    (reference.channel_id === undefined ||
      reference.channel_id === message.channel_id ||
      reference.channel_id === to.channel)
  ) {
    line.replyTo = reference.message_id;
  }
  return line;
}

/**
 * The content with mentions rendered as `@name` and channel, role and emoji references readably,
 * and each attachment and sticker named. Without the MESSAGE_CONTENT intent Discord sends an
 * empty `content` (and no attachments) for others' messages.
 */
export function messageText(message: DiscordMessage): string {
  const names = new Map<string, string>();
  for (const mention of message.mentions ?? []) {
    const name = mention.global_name || mention.username;
    if (mention.id && name) names.set(mention.id, name);
  }
  let text = typeof message.content === "string" ? message.content : "";
  if (text.includes("<")) {
    text = text
      .replace(/<@!?(\d+)>/g, (_, id: string) => `@${names.get(id) ?? id}`)
      .replace(/<@&(\d+)>/g, (_, id: string) => `@role-${id}`)
      .replace(/<#(\d+)>/g, (_, id: string) => `#${id}`)
      .replace(/<a?:(\w+):\d+>/g, (_, name: string) => `:${name}:`);
  }
  const named = (label: string, name: unknown) => {
    if (typeof name === "string" && name !== "") text += `${text ? "\n" : ""}[${label}: ${name}]`;
  };
  for (const file of message.attachments ?? []) named("attachment", file.filename);
  for (const sticker of message.sticker_items ?? []) named("sticker", sticker.name);
  return text;
}
