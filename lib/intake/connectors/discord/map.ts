/**
 * Discord REST message objects (developers/resources/message) as ingestion lines: the same
 * choices as the DiscordChatExporter reader (`lib/intake/exports`), from the API's own field names.
 */

import { PLATFORM_PLACE_SHAPES } from "../../../base/identity/index.js";
import { discordEmbedsText, forwardedText, inline } from "../../exports/index.js";
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
  embeds?: unknown[];
  message_reference?: { type?: number; message_id?: string; channel_id?: string };
  /** A forward's copy of the message it quotes (`message_reference.type` 1). */
  message_snapshots?: { message?: DiscordSnapshot }[];
  /** Absent: not fetched; null: the referenced message was deleted. */
  referenced_message?: DiscordMessage | null;
}

/** The fields of a forwarded message's copy that are read. */
type DiscordSnapshot = Pick<
  DiscordMessage,
  "content" | "attachments" | "sticker_items" | "mentions" | "embeds"
>;

/** Types that are someone writing: DEFAULT, REPLY, CHAT_INPUT_COMMAND, CONTEXT_MENU_COMMAND. */
const AUTHORED_TYPES = new Set([0, 19, 20, 23]);
/** THREAD_STARTER_MESSAGE: a copy of the root, which is in the parent channel already. */
const THREAD_STARTER = 21;
/** `message_reference.type` FORWARD: a forward quotes, it does not answer. */
const FORWARD = 1;

/**
 * Where messages of one polled source land: the channel, and the thread when it is one; its guild
 * (a direct message's channel has none), for the messages' links.
 */
export interface Destination {
  channel: string;
  channelName?: string;
  thread?: string;
  guild?: string;
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
  // Only of the stored shape: one that is not would refuse the message, not just its link.
  if (to.guild !== undefined && PLATFORM_PLACE_SHAPES.guild.test(to.guild)) line.guild = to.guild;
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
 * each attachment and sticker named, the embeds of a bot's or webhook's message (or of one with
 * no content: a link preview repeats the link a person wrote) as their titles, descriptions and
 * fields, and a forward's quoted message as `[forwarded] …`. Without the MESSAGE_CONTENT intent
 * Discord sends an empty `content` (and no attachments, embeds or snapshots) for others' messages.
 */
export function messageText(message: DiscordMessage): string {
  const bot = message.author?.bot === true || Boolean(message.webhook_id);
  let text = ownText(message, bot);
  for (const snapshot of message.message_snapshots ?? []) {
    if (typeof snapshot?.message !== "object" || snapshot.message === null) continue;
    const quoted = forwardedText(ownText(snapshot.message, false));
    text += `${text ? "\n" : ""}${quoted}`;
  }
  return text;
}

function ownText(message: DiscordSnapshot, bot: boolean): string {
  const names = new Map<string, string>();
  for (const mention of message.mentions ?? []) {
    const name = mention.global_name || mention.username;
    if (mention.id && name) names.set(mention.id, name);
  }
  const render = (raw: string) =>
    raw.includes("<")
      ? raw
          .replace(/<@!?(\d+)>/g, (_, id: string) => `@${names.get(id) ?? id}`)
          .replace(/<@&(\d+)>/g, (_, id: string) => `@role-${id}`)
          .replace(/<#(\d+)>/g, (_, id: string) => `#${id}`)
          .replace(/<a?:(\w+):\d+>/g, (_, name: string) => `:${name}:`)
      : raw;
  const content = typeof message.content === "string" ? message.content : "";
  let text = render(content);
  const add = (line: string) => {
    if (line !== "") text += `${text ? "\n" : ""}${line}`;
  };
  const named = (label: string, name: unknown) => {
    if (typeof name === "string" && name !== "") add(`[${label}: ${inline(name)}]`);
  };
  for (const file of message.attachments ?? []) named("attachment", file.filename);
  for (const sticker of message.sticker_items ?? []) named("sticker", sticker.name);
  if (bot || content.trim() === "") add(discordEmbedsText(message.embeds, render));
  return text;
}
