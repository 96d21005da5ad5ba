/**
 * DiscordChatExporter JSON: one file per channel (or a folder of them, possibly overlapping date
 * ranges of the same channel). Each file is walked with the bounded JSON reader; a thread's file
 * (its `channel.category*` naming the parent) goes to the parent channel with `thread` set. Files
 * are grouped by channel from their headers, and one channel is held at a time while it is sorted.
 */
import { stat } from "node:fs/promises";
import { compareIds, PLATFORM_PLACE_SHAPES } from "../../base/identity/index.js";
import { InvalidMessageError, parseTimestamp } from "../../history/messages/index.js";
import { describe, type FileTally, type ReadContext } from "./context.js";
import { discordEmbedsText, forwardedText } from "./discord-text.js";
import { ExportFormatError } from "./errors.js";
import { listFiles } from "./files.js";
import { isoTimestamp } from "./ids.js";
import { inline } from "./inline.js";
import { type JsonPath, jsonFileValues, parseValue, type Selection } from "./json-stream.js";
import { sortMessages } from "./order.js";
import type { ExportMessage } from "./types.js";

const THREAD_TYPES = new Set(["GuildPublicThread", "GuildPrivateThread", "GuildNewsThread"]);
const SYSTEM_TYPES = new Set([
  "RecipientAdd",
  "RecipientRemove",
  "Call",
  "ChannelNameChange",
  "ChannelIconChange",
  "ChannelPinnedMessage",
  "GuildMemberJoin",
  "ThreadCreated",
]);
/** Discord's THREAD_STARTER_MESSAGE (DCE writes unnamed kinds as their number): a copy of the root. */
const THREAD_STARTER = "21";

interface DiscordChannel {
  /** The channel messages land in (the parent, for a thread), its name, and the thread if any. */
  id: string;
  name: string;
  thread?: string;
  /** The file's own channel id, which a reference inside it names. */
  own: string;
  /** The guild's id, when a snowflake (a direct message's export says `0`), for the links. */
  guild?: string;
}

const selectHeader = (path: JsonPath): Selection =>
  path.length === 0
    ? "descend"
    : path.length === 1 && (path[0] === "channel" || path[0] === "guild")
      ? "capture"
      : "skip";

const selectAll = (path: JsonPath): Selection => {
  if (path.length === 0) return "descend";
  if (path[0] === "channel") return path.length === 1 ? "capture" : "skip";
  if (path[0] === "messages") return path.length === 1 ? "descend" : "capture";
  return "skip";
};

/** The DCE files of an input: the file itself, or every `.json` file under the folder. */
async function discordFiles(input: string): Promise<string[]> {
  if (!(await stat(input)).isDirectory()) return [input];
  return (await listFiles(input)).filter((path) => path.endsWith(".json"));
}

export async function* readDiscord(
  input: string,
  context: ReadContext,
): AsyncGenerator<ExportMessage[]> {
  const files = await discordFiles(input);
  const byChannel = new Map<string, { file: string; channel: DiscordChannel }[]>();
  for (const file of files) {
    const channel = await readHeader(file);
    const group = byChannel.get(channel.id) ?? [];
    group.push({ file, channel });
    byChannel.set(channel.id, group);
  }
  let done = 0;
  for (const id of [...byChannel.keys()].sort(compareIds)) {
    const buffer: ExportMessage[] = [];
    for (const { file, channel } of byChannel.get(id) ?? []) {
      context.progress(file, done++, files.length);
      const tally = context.file(file);
      for await (const value of jsonFileValues(file, file, selectAll)) {
        if (value.path[0] !== "messages") continue;
        const at = `messages[${value.path[1]}]`;
        const message = discordMessage(parseValue(value, file), channel, tally, at);
        if (message) {
          buffer.push(message);
          tally.taken();
        }
      }
    }
    yield sortMessages(buffer);
  }
}

/**
 * The channel a file's messages go to, from its `channel` object (read before `messages`), with
 * its guild's id from the `guild` object DiscordChatExporter writes before it.
 */
async function readHeader(file: string): Promise<DiscordChannel> {
  let guild: string | undefined;
  for await (const value of jsonFileValues(file, file, selectHeader)) {
    const parsed = parseValue(value, file);
    if (value.path[0] === "guild") {
      const id = (parsed as { id?: unknown } | null)?.id;
      if (typeof id === "string" && PLATFORM_PLACE_SHAPES.guild.test(id)) guild = id;
      continue;
    }
    const channel = channelOf(parsed, file);
    return guild === undefined ? channel : { ...channel, guild };
  }
  throw new ExportFormatError(
    file,
    "(root)",
    "channel",
    "missing: a DiscordChatExporter file has a channel object",
  );
}

function channelOf(value: unknown, file: string): DiscordChannel {
  const channel = value as {
    id?: unknown;
    type?: unknown;
    categoryId?: unknown;
    category?: unknown;
    name?: unknown;
  };
  if (
    typeof channel !== "object" ||
    channel === null ||
    typeof channel.id !== "string" ||
    channel.id === ""
  ) {
    throw new ExportFormatError(
      file,
      "channel",
      "id",
      `expected a non-empty string (got ${describe(channel?.id)})`,
    );
  }
  const name = typeof channel.name === "string" && channel.name !== "" ? channel.name : channel.id;
  const parent =
    typeof channel.categoryId === "string" && channel.categoryId !== ""
      ? channel.categoryId
      : undefined;
  if (THREAD_TYPES.has(channel.type as string) && parent !== undefined) {
    const parentName =
      typeof channel.category === "string" && channel.category !== "" ? channel.category : parent;
    return { id: parent, name: parentName, thread: channel.id, own: channel.id };
  }
  return { id: channel.id, name, own: channel.id };
}

interface DiscordRaw {
  id?: unknown;
  type?: unknown;
  timestamp?: unknown;
  content?: unknown;
  author?: { id?: unknown; name?: unknown; nickname?: unknown; isBot?: unknown };
  attachments?: unknown;
  stickers?: unknown;
  mentions?: unknown;
  embeds?: unknown;
  reference?: { type?: unknown; messageId?: unknown; channelId?: unknown };
  /** A forward's copy of the message it quotes (`reference.type` "Forward"). */
  forwardedMessage?: Pick<
    DiscordRaw,
    "content" | "attachments" | "stickers" | "mentions" | "embeds"
  >;
}

function discordMessage(
  value: unknown,
  channel: DiscordChannel,
  tally: FileTally,
  at: string,
): ExportMessage | undefined {
  const raw = tally.record<DiscordRaw>(value, at);
  if (raw === undefined) return undefined;
  if (typeof raw.id !== "string" || !/^\d{1,20}$/.test(raw.id)) {
    tally.skip(at, "id", `expected a snowflake string (got ${describe(raw.id)})`);
    return undefined;
  }
  const type = typeof raw.type === "string" ? raw.type : "Default";
  if (type === THREAD_STARTER) {
    tally.skip(at, "type", "thread starter message (the root is in the parent channel)");
    return undefined;
  }
  let ms: number;
  try {
    ms = parseTimestamp(raw.timestamp);
  } catch (error) {
    if (!(error instanceof InvalidMessageError)) throw error;
    // Not the parser's reason: it quotes the value, and a reason is a report key.
    tally.skip(
      at,
      "timestamp",
      `expected an ISO 8601 date-time with a zone (got ${describe(raw.timestamp)})`,
    );
    return undefined;
  }
  const author = raw.author;
  if (
    typeof author !== "object" ||
    author === null ||
    typeof author.id !== "string" ||
    author.id === ""
  ) {
    tally.skip(at, "author.id", `expected a non-empty string (got ${describe(author?.id)})`);
    return undefined;
  }
  if (raw.content !== undefined && raw.content !== null && typeof raw.content !== "string") {
    tally.skip(at, "content", `expected a string (got ${describe(raw.content)})`);
    return undefined;
  }
  const numeric = /^\d+$/.test(type) ? Number(type) : undefined;
  const system = SYSTEM_TYPES.has(type) || (numeric !== undefined && numeric >= 1 && numeric <= 18);
  const name = [author.nickname, author.name].find(
    (n): n is string => typeof n === "string" && n !== "",
  );
  const message: ExportMessage = {
    id: raw.id,
    ts: isoTimestamp(ms) as string,
    channel: channel.id,
    channelName: channel.name,
    user: system ? null : (name ?? author.id),
    text: discordText(raw, author.isBot === true),
    userId: author.id,
  };
  const reference = raw.reference;
  // A forward quotes the message, it does not answer it.
  if (
    reference?.type !== "Forward" &&
    typeof reference?.messageId === "string" &&
    reference.messageId !== "" &&
    (reference.channelId === undefined ||
      reference.channelId === null ||
      reference.channelId === channel.own ||
      reference.channelId === channel.id)
  ) {
    message.replyTo = reference.messageId;
  }
  if (channel.thread !== undefined && raw.id !== channel.thread) message.thread = channel.thread;
  message.kind = system ? "system" : author.isBot === true ? "bot" : "user";
  message.platform = "discord";
  if (channel.guild !== undefined) message.guild = channel.guild;
  return message;
}

/**
 * The content with what an unformatted export leaves raw rendered (`<@123>` as `@name` from the
 * message's `mentions`, `<#123>`, `<@&123>`, custom emoji as `:name:`, `<t:…>` as a date), each
 * attachment and sticker named, the embeds of a bot's message or of one with no content (a link
 * preview repeats the link a person wrote), and a forward's quoted message as `[forwarded] …`:
 * as the live poller reads the same message.
 */
function discordText(raw: DiscordRaw, bot: boolean): string {
  let text = ownText(raw, bot, raw.mentions);
  const forwarded = raw.forwardedMessage;
  if (typeof forwarded === "object" && forwarded !== null) {
    const quoted = forwardedText(ownText(forwarded, false, forwarded.mentions ?? raw.mentions));
    text += `${text ? "\n" : ""}${quoted}`;
  }
  return text;
}

function ownText(
  raw: Pick<DiscordRaw, "content" | "attachments" | "stickers" | "embeds">,
  bot: boolean,
  mentions: unknown,
): string {
  const names = new Map<string, string>();
  if (Array.isArray(mentions)) {
    for (const mention of mentions as { id?: unknown; nickname?: unknown; name?: unknown }[]) {
      const name = [mention?.nickname, mention?.name].find(
        (n): n is string => typeof n === "string" && n !== "",
      );
      if (typeof mention?.id === "string" && name !== undefined) names.set(mention.id, name);
    }
  }
  const render = (value: string) =>
    value.includes("<")
      ? value
          .replace(/<@!?(\d+)>/g, (_, id: string) => `@${names.get(id) ?? id}`)
          .replace(/<@&(\d+)>/g, (_, id: string) => `@role-${id}`)
          .replace(/<#(\d+)>/g, (_, id: string) => `#${id}`)
          .replace(/<a?:(\w+):\d+>/g, (_, name: string) => `:${name}:`)
          .replace(/<t:(-?\d{1,12})(?::[tTdDfFR])?>/g, (whole, seconds: string) => {
            const date = new Date(Number(seconds) * 1000);
            // Minutes and a zone, as a person reads it: an ISO string's pieces became topics.
            return Number.isNaN(date.getTime())
              ? whole
              : `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
          })
      : value;
  const content = typeof raw.content === "string" ? raw.content : "";
  let text = render(content);
  const add = (line: string) => {
    if (line !== "") text += `${text ? "\n" : ""}${line}`;
  };
  const named = (list: unknown, field: "fileName" | "name", label: string) => {
    if (!Array.isArray(list)) return;
    for (const item of list) {
      const name = (item as Record<string, unknown>)?.[field];
      if (typeof name === "string" && name !== "") add(`[${label}: ${inline(name)}]`);
    }
  };
  named(raw.attachments, "fileName", "attachment");
  named(raw.stickers, "name", "sticker");
  if (bot || content.trim() === "") add(discordEmbedsText(raw.embeds, render));
  return text;
}
