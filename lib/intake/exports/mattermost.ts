/**
 * Mattermost bulk export (JSONL): `post` lines (with their `replies`) and `direct_post` lines,
 * named by team and channel, by members for direct channels. The format has no message ids, so
 * each is made from the content (channel, user, `create_at`, message, and an ordinal among exact
 * repeats), as Mattermost's own import identifies posts; replies carry their root as `thread`.
 * Posts come in no order, so the messages of a file are held until it ends and then sorted.
 */
import { basename } from "node:path";
import { describe, type FileTally, type ReadContext, safeWord } from "./context.js";
import { fileLines } from "./files.js";
import { contentId, isoTimestamp, Repeats } from "./ids.js";
import { sortMessages } from "./order.js";
import type { ExportMessage } from "./types.js";

interface RawPost {
  team?: unknown;
  channel?: unknown;
  channel_members?: unknown;
  user?: unknown;
  message?: unknown;
  create_at?: unknown;
  type?: unknown;
  props?: Record<string, unknown>;
  attachments?: unknown;
  replies?: unknown;
}

/** A message read before names are known: its author's username, resolved at the end. */
type Pending = ExportMessage & { userId: string };

const NOT_MESSAGES = new Set(["version", "scheme", "emoji", "team", "role", "direct_channel"]);

export async function* readMattermost(
  input: string,
  context: ReadContext,
): AsyncGenerator<ExportMessage[]> {
  context.progress(input, 0, 1);
  const tally = context.file(input);
  const people = new Map<string, string>();
  const channelNames = new Map<string, string>();
  const repeats = new Repeats();
  const buffer: Pending[] = [];
  let line = 0;
  for await (const text of fileLines(input, context.notUtf8(input))) {
    line++;
    if (text.trim() === "") continue;
    const at = `line ${line}`;
    let value: { type?: unknown; [key: string]: unknown };
    try {
      value = JSON.parse(text);
    } catch {
      // Not the parser's message: it quotes the line, and a reason is a report key.
      tally.skip(at, "json", "not valid JSON");
      continue;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      tally.skip(at, "json", `expected a JSON object (got ${describe(value)})`);
      continue;
    }
    const type = value.type;
    if (type === "user") remember(value.user, people);
    else if (type === "channel") nameChannel(value.channel, channelNames);
    else if (type === "post" || type === "direct_post") {
      const post = value[type] as RawPost | undefined;
      readPost(post, type === "direct_post", { tally, at, repeats, buffer });
    } else if (!NOT_MESSAGES.has(type as string)) {
      tally.skip(at, "type", `not a line this reader knows (type ${safeWord(type)})`);
    }
  }
  for (const message of buffer) {
    message.user =
      message.kind === "system" ? null : (people.get(message.userId) ?? message.userId);
    if (message.channel.startsWith("dm:")) {
      message.channelName = message.channel
        .slice(3)
        .split(",")
        .map((m) => people.get(m) ?? m)
        .join(", ");
    } else message.channelName = channelNames.get(message.channel) ?? message.channelName;
    tally.taken();
  }
  yield sortMessages(buffer);
}

function remember(value: unknown, people: Map<string, string>): void {
  const user = value as {
    username?: unknown;
    nickname?: unknown;
    first_name?: unknown;
    last_name?: unknown;
  };
  if (typeof user?.username !== "string") return;
  const full = [user.first_name, user.last_name]
    .filter((n) => typeof n === "string" && n !== "")
    .join(" ");
  const nickname = typeof user.nickname === "string" ? user.nickname : "";
  people.set(user.username, nickname || full || user.username);
}

function nameChannel(value: unknown, names: Map<string, string>): void {
  const channel = value as { team?: unknown; name?: unknown; display_name?: unknown };
  if (typeof channel?.team !== "string" || typeof channel.name !== "string") return;
  const shown =
    typeof channel.display_name === "string" && channel.display_name
      ? channel.display_name
      : channel.name;
  names.set(`${channel.team}/${channel.name}`, shown);
}

interface Sink {
  tally: FileTally;
  at: string;
  repeats: Repeats;
  buffer: Pending[];
}

function readPost(post: RawPost | undefined, direct: boolean, sink: Sink): void {
  const { tally, at } = sink;
  if (typeof post !== "object" || post === null || Array.isArray(post)) {
    tally.skip(at, direct ? "direct_post" : "post", `expected an object (got ${describe(post)})`);
    return;
  }
  let channel: string;
  let channelName: string;
  if (direct) {
    const members = Array.isArray(post.channel_members)
      ? post.channel_members.filter((m): m is string => typeof m === "string" && m !== "")
      : [];
    if (members.length === 0) {
      tally.skip(at, "direct_post.channel_members", "expected a list of usernames");
      return;
    }
    channel = `dm:${[...new Set(members)].sort().join(",")}`;
    channelName = channel.slice(3);
  } else {
    if (
      typeof post.team !== "string" ||
      post.team === "" ||
      typeof post.channel !== "string" ||
      post.channel === ""
    ) {
      tally.skip(
        at,
        typeof post.team !== "string" || post.team === "" ? "post.team" : "post.channel",
        "expected a non-empty string",
      );
      return;
    }
    channel = `${post.team}/${post.channel}`;
    channelName = post.channel;
  }
  const field = direct ? "direct_post" : "post";
  const root = message(post, channel, channelName, undefined, sink, field);
  if (root === undefined || !Array.isArray(post.replies)) return;
  post.replies.forEach((reply, i) => {
    message(reply as RawPost, channel, channelName, root.id, sink, `${field}.replies[${i}]`);
  });
}

function message(
  raw: RawPost,
  channel: string,
  channelName: string,
  root: string | undefined,
  sink: Sink,
  field: string,
): Pending | undefined {
  const { tally, at } = sink;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    tally.skip(at, field, `expected an object (got ${describe(raw)})`);
    return undefined;
  }
  if (typeof raw.user !== "string" || raw.user === "") {
    tally.skip(at, `${field}.user`, `expected a username (got ${describe(raw.user)})`);
    return undefined;
  }
  const ts =
    typeof raw.create_at === "number" && Number.isSafeInteger(raw.create_at)
      ? isoTimestamp(raw.create_at)
      : undefined;
  if (ts === undefined) {
    tally.skip(
      at,
      `${field}.create_at`,
      `expected epoch milliseconds (got ${describe(raw.create_at)})`,
    );
    return undefined;
  }
  if (typeof raw.message !== "string") {
    tally.skip(at, `${field}.message`, `expected a string (got ${describe(raw.message)})`);
    return undefined;
  }
  const content =
    root === undefined
      ? ["post", channel, raw.user, raw.create_at as number, raw.message]
      : ["reply", channel, root, raw.user, raw.create_at as number, raw.message];
  let text = raw.message;
  if (Array.isArray(raw.attachments)) {
    for (const attachment of raw.attachments as { path?: unknown }[]) {
      if (typeof attachment?.path === "string" && attachment.path !== "")
        text += `${text ? "\n" : ""}[file: ${basename(attachment.path)}]`;
    }
  }
  const system = typeof raw.type === "string" && raw.type.startsWith("system_");
  const bot = raw.props?.from_bot === "true" || raw.props?.from_webhook === "true";
  const pending: Pending = {
    id: contentId(content, sink.repeats.next(content)),
    ts,
    channel,
    channelName,
    user: raw.user,
    text,
    userId: raw.user,
  };
  if (root !== undefined) pending.thread = root;
  pending.kind = system ? "system" : bot ? "bot" : "user";
  pending.platform = "mattermost";
  sink.buffer.push(pending);
  return pending;
}
