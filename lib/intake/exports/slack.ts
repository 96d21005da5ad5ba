/**
 * Slack workspace exports (a ZIP or its unpacked folder): `channels.json`, `groups.json`,
 * `dms.json`, `mpims.json` (the channels and their ids), `users.json` (names), and one folder per
 * channel of `YYYY-MM-DD.json` arrays. Replies sit in the day file of their own date, on their
 * parent channel with `thread` set; a deleted parent (`tombstone`) is kept so its replies keep a
 * root. Channels are read one at a time in id order, each held only while it is sorted.
 */
import { stat } from "node:fs/promises";
import { compareIds } from "../../base/identity/index.js";
import { describe, type FileTally, jsonErrorAt, type ReadContext, safeWord } from "./context.js";
import { ExportFormatError } from "./errors.js";
import { type ExportTree, MAX_ENTRY_BYTES, openFolderTree, openZipTree } from "./files.js";
import { isoTimestamp } from "./ids.js";
import { inline } from "./inline.js";
import { type JsonPath, jsonValues, parseValue, type Selection } from "./json-stream.js";
import { sortMessages } from "./order.js";
import { renderSlackText, type SlackNames } from "./slack-text.js";
import type { ExportMessage } from "./types.js";

/** Subtypes that are the platform's own lines (joins, renames, pins): `kind: system`. */
const SYSTEM_SUBTYPES: ReadonlySet<string> = new Set([
  "channel_join",
  "channel_leave",
  "channel_topic",
  "channel_purpose",
  "channel_name",
  "channel_archive",
  "channel_unarchive",
  "channel_convert_to_private",
  "channel_convert_to_public",
  "group_join",
  "group_leave",
  "group_topic",
  "group_purpose",
  "group_name",
  "group_archive",
  "group_unarchive",
  "pinned_item",
  "unpinned_item",
  "bot_add",
  "bot_remove",
  "reminder_add",
  "tombstone",
]);

/** The channel lists of an export and what kind of conversation each holds. */
const CHANNEL_LISTS = ["channels.json", "groups.json", "mpims.json", "dms.json"] as const;

const DAY_FILE = /^(.*)\/(\d{4}-\d{2}-\d{2})\.json$/;

interface SlackChannel {
  id: string;
  name: string;
  days: string[];
}

/** Whether a tree is a Slack export: where its `channels.json` (or `users.json`) sits. */
export function slackRoot(tree: ExportTree): string | undefined {
  let root: string | undefined;
  for (const { path } of tree.files) {
    const match = /^(.*?)(channels|users)\.json$/.exec(path);
    if (match && (match[1] === "" || match[1].endsWith("/"))) {
      if (root === undefined || match[1].length < root.length) root = match[1];
    }
  }
  return root;
}

async function openSlackTree(input: string): Promise<ExportTree> {
  return (await stat(input)).isDirectory() ? openFolderTree(input) : openZipTree(input);
}

export async function* readSlack(
  input: string,
  context: ReadContext,
): AsyncGenerator<ExportMessage[]> {
  const tree = await openSlackTree(input);
  try {
    yield* readTree(tree, context);
  } finally {
    tree.close();
  }
}

async function* readTree(tree: ExportTree, context: ReadContext): AsyncGenerator<ExportMessage[]> {
  const root = slackRoot(tree);
  if (root === undefined) {
    throw new ExportFormatError(
      tree.label("channels.json"),
      "file",
      "channels.json",
      "missing: a Slack export has channels.json and users.json at its top",
    );
  }
  const sizes = new Map(tree.files.map((f) => [f.path, f.size]));
  // Lists are walked entry by entry: a users.json of a large workspace (or a ZIP bomb's) is never
  // held whole, only what is kept of it (names by id).
  const readList = async (name: string, each: (entry: unknown, index: number) => void) => {
    const path = root + name;
    if (!sizes.has(path)) return;
    const label = tree.label(path);
    for await (const value of jsonValues(tree.stream(path), label, listEntries)) {
      if (typeof value.path[0] !== "number") {
        throw new ExportFormatError(label, "file", name, "expected a JSON array (got an object)");
      }
      each(parseValue(value, label), value.path[0] as number);
    }
  };
  const users = new Map<string, string>();
  await readList("users.json", (entry, index) =>
    addUserName(users, entry, index, tree.label(`${root}users.json`)),
  );
  const byFolder = new Map<string, SlackChannel>();
  const channelNames = new Map<string, string>();
  for (const list of CHANNEL_LISTS) {
    await readList(list, (entry, index) => {
      const channel = channelOf(entry, list, users);
      if (typeof channel === "string") {
        throw new ExportFormatError(
          tree.label(root + list),
          `${list}[${index}]`,
          channel,
          "expected a non-empty string",
        );
      }
      channelNames.set(channel.id, channel.name);
      const folderName =
        list === "dms.json" ? channel.id : ((entry as { name?: string }).name ?? channel.id);
      byFolder.set(folderName, channel);
      byFolder.set(channel.id, byFolder.get(channel.id) ?? channel);
    });
  }
  const channels = new Map<string, SlackChannel>();
  for (const { path } of tree.files) {
    const match = path.startsWith(root) ? DAY_FILE.exec(path.slice(root.length)) : null;
    if (!match || match[1].includes("/")) continue;
    let channel = byFolder.get(match[1]);
    if (channel === undefined) {
      channel = { id: match[1], name: match[1], days: [] };
      byFolder.set(match[1], channel);
      context.note(
        `Slack: a channel folder is listed in no channels file; its folder name is its id`,
      );
    }
    channels.set(channel.id, channel);
    channel.days.push(path);
  }
  const names: SlackNames = { users, channels: channelNames };
  const ordered = [...channels.values()].sort((a, b) => compareIds(a.id, b.id));
  const days = ordered.flatMap((channel) => channel.days.sort().map((path) => ({ channel, path })));
  const readable = (k: number) =>
    k < days.length && (sizes.get(days[k].path) ?? 0) <= MAX_ENTRY_BYTES;
  // The next day file is decompressed while this one is parsed.
  let ahead = readable(0) ? quiet(tree.read(days[0].path)) : undefined;
  let buffer: ExportMessage[] = [];
  for (let k = 0; k < days.length; k++) {
    const { channel, path } = days[k];
    const label = tree.label(path);
    context.progress(label, k, days.length);
    const tally = context.file(label);
    const bytes = ahead;
    ahead = readable(k + 1) ? quiet(tree.read(days[k + 1].path)) : undefined;
    if (bytes === undefined) {
      tally.skip("file", "file", `over ${MAX_ENTRY_BYTES / 1024 / 1024} MiB`);
    } else {
      const day = parseJson(await bytes, label);
      if (!Array.isArray(day)) {
        throw new ExportFormatError(
          label,
          "file",
          "messages",
          `expected a JSON array of messages (got ${describe(day)})`,
        );
      }
      for (let index = 0; index < day.length; index++) {
        const message = slackMessage(day[index], channel, names, tally, `[${index}]`);
        if (message) {
          buffer.push(message);
          tally.taken();
        }
      }
    }
    if (k + 1 === days.length || days[k + 1].channel !== channel) {
      yield sortMessages(buffer);
      buffer = [];
    }
  }
}

/** A read started ahead: its failure surfaces where it is awaited, never as an unhandled one. */
function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

function parseJson(bytes: Buffer, label: string): unknown {
  try {
    return JSON.parse(bytes.toString("utf8").replace(/^\uFEFF/, ""));
  } catch (error) {
    throw new ExportFormatError(label, "file", "json", `not valid JSON${jsonErrorAt(error)}`);
  }
}

/** A list's entries: each element of the top array (an object's values are refused). */
const listEntries = (path: JsonPath): Selection =>
  path.length === 0 ? "descend" : path.length === 1 ? "capture" : "skip";

/** A user's display name by id: the profile's display name, else the real name, else the handle. */
function addUserName(
  names: Map<string, string>,
  entry: unknown,
  index: number,
  label: string,
): void {
  const user = entry as {
    id?: unknown;
    name?: unknown;
    real_name?: unknown;
    profile?: Record<string, unknown>;
  };
  if (typeof user !== "object" || user === null || typeof user.id !== "string" || user.id === "") {
    throw new ExportFormatError(label, `[${index}]`, "id", "expected a non-empty string");
  }
  const name = [
    user.profile?.display_name,
    user.profile?.real_name,
    user.real_name,
    user.name,
  ].find((n): n is string => typeof n === "string" && n.trim() !== "");
  if (name !== undefined) names.set(user.id, name);
}

/** A channel list's entry, or the name of its field at fault. */
function channelOf(
  entry: unknown,
  list: string,
  users: Map<string, string>,
): SlackChannel | string {
  if (typeof entry !== "object" || entry === null) return "id";
  const { id, name, members } = entry as { id?: unknown; name?: unknown; members?: unknown };
  if (typeof id !== "string" || id === "") return "id";
  if (list === "dms.json" || list === "mpims.json") {
    const people = Array.isArray(members)
      ? members.filter((m): m is string => typeof m === "string")
      : [];
    const shown = people.map((m) => users.get(m) ?? m).join(", ");
    return { id, name: shown || (typeof name === "string" && name ? name : id), days: [] };
  }
  if (typeof name !== "string" || name === "") return "name";
  return { id, name, days: [] };
}

/** The fields of a Slack message object (export or Events API) that are read. */
export interface SlackRaw {
  type?: unknown;
  subtype?: unknown;
  hidden?: unknown;
  ts?: unknown;
  thread_ts?: unknown;
  user?: unknown;
  bot_id?: unknown;
  username?: unknown;
  text?: unknown;
  user_profile?: { display_name?: unknown; real_name?: unknown };
  bot_profile?: { name?: unknown };
  files?: unknown;
  attachments?: unknown;
}

/** Milliseconds of a Slack `ts` (`"1736478630.905399"`), or undefined when it is none. */
export function slackTsMs(ts: unknown): number | undefined {
  if (typeof ts !== "string") return undefined;
  const match = /^(\d{1,12})(?:\.(\d{1,9}))?$/.exec(ts);
  if (!match) return undefined;
  return Number(match[1]) * 1000 + Number((match[2] ?? "").slice(0, 3).padEnd(3, "0"));
}

function slackMessage(
  value: unknown,
  channel: SlackChannel,
  names: SlackNames,
  tally: FileTally,
  at: string,
): ExportMessage | undefined {
  const raw = tally.record<SlackRaw>(value, at);
  if (raw === undefined) return undefined;
  const subtype = typeof raw.subtype === "string" ? raw.subtype : undefined;
  if (raw.hidden === true && subtype !== "tombstone") {
    tally.skip(at, "subtype", `hidden subtype ${safeWord(subtype)}`);
    return undefined;
  }
  if (raw.type !== undefined && raw.type !== "message") {
    tally.skip(at, "type", `not a message (type ${safeWord(raw.type)})`);
    return undefined;
  }
  const ms = slackTsMs(raw.ts);
  const ts = ms === undefined ? undefined : isoTimestamp(ms);
  if (ts === undefined) {
    tally.skip(
      at,
      "ts",
      `expected a Slack timestamp string such as "1736478630.905399" (got ${describe(raw.ts)})`,
    );
    return undefined;
  }
  if (raw.text !== undefined && raw.text !== null && typeof raw.text !== "string") {
    tally.skip(at, "text", `expected a string (got ${describe(raw.text)})`);
    return undefined;
  }
  const author = slackAuthor(raw, subtype, names);
  if (author === undefined) {
    tally.skip(at, "user", "no user: a person's message names its author");
    return undefined;
  }
  const message: ExportMessage = {
    id: raw.ts as string,
    ts,
    channel: channel.id,
    channelName: channel.name,
    user: author.user,
    text: slackText(raw, names, subtype),
  };
  if (author.userId !== undefined) message.userId = author.userId;
  if (
    typeof raw.thread_ts === "string" &&
    raw.thread_ts !== raw.ts &&
    slackTsMs(raw.thread_ts) !== undefined
  ) {
    message.thread = raw.thread_ts;
  }
  message.kind = author.kind;
  message.platform = "slack";
  return message;
}

/** Slackbot's user id: it posts reminders and custom responses with no bot_id. */
const SLACKBOT = "USLACKBOT";

/** Who wrote a Slack message, as both the export reader and the Events receiver store it. */
interface SlackAuthor {
  kind: "user" | "bot" | "system";
  /** The display name; null for the platform's own lines. */
  user: string | null;
  /** The platform id: the person's `U…`, a bot's `bot_id` (`B…`), the actor's of a system line. */
  userId?: string;
}

/**
 * The author of a message (an export's or an Events API one), or undefined for a person's
 * message that names no one. A bot is a `bot_message`, and also any post that carries a
 * `bot_id` or a `bot_profile`, or comes from Slackbot: apps posting with their bot token send
 * their bot user in `user`, with `bot_id`, `app_id` and `bot_profile` and no subtype (CI
 * notifications, GitHub, a bot's thread reply). A bot is named by the message's `username`
 * (a webhook's per-message name), else `bot_profile.name`, else its bot user's name.
 */
export function slackAuthor(
  raw: SlackRaw,
  subtype: string | undefined,
  names: SlackNames,
): SlackAuthor | undefined {
  const userId = typeof raw.user === "string" && raw.user !== "" ? raw.user : undefined;
  const botId = typeof raw.bot_id === "string" && raw.bot_id !== "" ? raw.bot_id : undefined;
  if (subtype !== undefined && SYSTEM_SUBTYPES.has(subtype)) {
    return { kind: "system", user: null, ...(userId === undefined ? {} : { userId }) };
  }
  const profile = raw.bot_profile;
  const bot =
    subtype === "bot_message" ||
    botId !== undefined ||
    (typeof profile === "object" && profile !== null) ||
    userId === SLACKBOT;
  if (bot) {
    const user =
      firstText(
        raw.username,
        profile?.name,
        userId && names.users.get(userId),
        userId === SLACKBOT ? "Slackbot" : undefined,
        botId,
        userId,
      ) ?? null;
    const id = botId ?? userId;
    return { kind: "bot", user, ...(id === undefined ? {} : { userId: id }) };
  }
  const user = firstText(
    userId && names.users.get(userId),
    raw.user_profile?.display_name,
    raw.user_profile?.real_name,
    userId,
  );
  if (user === undefined) return undefined;
  return { kind: "user", user, ...(userId === undefined ? {} : { userId }) };
}

/**
 * The text, rendered, with attached files named and, for an empty text, attachments' fallbacks:
 * an export's message or an Events API one (the live connector renders as imports do).
 */
export function slackText(raw: SlackRaw, names: SlackNames, subtype: string | undefined): string {
  let text = renderSlackText(typeof raw.text === "string" ? raw.text : "", names);
  if (text === "" && subtype === "tombstone") text = "(deleted message)";
  if (text === "" && Array.isArray(raw.attachments)) {
    const fallbacks = raw.attachments
      .map((a) => (a as { fallback?: unknown; text?: unknown }) ?? {})
      .map((a) => firstText(a.fallback, a.text))
      .filter((t): t is string => t !== undefined);
    text = renderSlackText(fallbacks.join("\n"), names);
  }
  if (Array.isArray(raw.files)) {
    for (const file of raw.files) {
      const name = firstText(
        (file as { name?: unknown })?.name,
        (file as { title?: unknown })?.title,
      );
      if (name !== undefined) text += `${text ? "\n" : ""}[file: ${inline(name)}]`;
    }
  }
  return text;
}

function firstText(...values: unknown[]): string | undefined {
  return values.find((v): v is string => typeof v === "string" && v.trim() !== "");
}
