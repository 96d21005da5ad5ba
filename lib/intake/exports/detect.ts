/** Which export format a path holds, from its names and its first bytes. */
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { ExportInputError } from "./errors.js";
import { fileHead, listFiles, openZipTree } from "./files.js";
import { IRC_LOG_FILE, ircLayout } from "./irc.js";
import { slackRoot } from "./slack.js";
import type { ExportFormat } from "./types.js";
import { parseHeader } from "./whatsapp.js";

/**
 * The format of a file or folder: a ZIP or a folder with `channels.json`/`users.json` is Slack; a
 * JSON file whose head has `guild` and `channel` is DiscordChatExporter, one with `messages` or
 * `chats` and Telegram's fields is Telegram; a JSON-lines file starting with Mattermost's
 * `version` line is Mattermost; a text file whose lines start with a date and time is WhatsApp,
 * one whose first line is an IRC client's or bouncer's log line is IRC. A folder of
 * DiscordChatExporter files is Discord.
 *
 * @throws ExportInputError naming what was looked for.
 */
export async function detectFormat(path: string): Promise<ExportFormat> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch {
    throw new ExportInputError(path, "no such file or folder");
  }
  if (info.isDirectory()) return detectFolder(path);
  const head = await fileHead(path);
  if (head.startsWith("PK")) {
    const tree = await openZipTree(path);
    tree.close();
    if (slackRoot(tree) !== undefined) return "slack";
    throw new ExportInputError(
      path,
      "a ZIP without channels.json or users.json: not a Slack export (the only zipped format read)",
    );
  }
  const format = detectText(head);
  if (format) return format;
  throw new ExportInputError(
    path,
    "not a Slack, DiscordChatExporter, Telegram, Mattermost or WhatsApp export nor an IRC log (give --format to say which)",
  );
}

const TELEGRAM_CHAT_TYPES = [
  "personal_chat",
  "bot_chat",
  "private_group",
  "private_supergroup",
  "public_supergroup",
  "private_channel",
  "public_channel",
  "saved_messages",
];
const TELEGRAM_TYPES = new RegExp(`"type"\\s*:\\s*"(${TELEGRAM_CHAT_TYPES.join("|")})"`);

/** Lines of a text file's head looked at for an IRC log line. */
const IRC_HEAD_LINES = 5;

function detectText(head: string): ExportFormat | undefined {
  const start = head.trimStart();
  if (start.startsWith("{")) {
    // A first line that is a whole JSON object is JSON lines (or a small one-line file): its
    // keys and their types decide, so a chat input line with `guild` and `channel` is no export.
    const whole = parseObject(start.split(/\r?\n/, 1)[0]);
    if (whole !== undefined) return formatOfKeys(whole);
    if (/"guild"\s*:/.test(head) && /"channel"\s*:/.test(head)) return "discord";
    if (/"(personal_information|chats|left_chats|about)"\s*:/.test(head)) return "telegram";
    if (TELEGRAM_TYPES.test(head) || /"date_unixtime"\s*:/.test(head)) return "telegram";
    return undefined;
  }
  const lines = head
    .split(/\r?\n/)
    .filter((line) => line.trim() !== "")
    .slice(0, IRC_HEAD_LINES);
  if (lines[0] !== undefined && parseHeader(lines[0])) return "whatsapp";
  // A log tool may write a header first: an IRC log line among the first few decides.
  return lines.some((line) => ircLayout(line) !== undefined) ? "irc" : undefined;
}

function parseObject(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function formatOfKeys(value: Record<string, unknown>): ExportFormat | undefined {
  if (value.type === "version") return "mattermost";
  const isObject = (v: unknown) => typeof v === "object" && v !== null;
  if (isObject(value.guild) && isObject(value.channel)) return "discord";
  if (isObject(value.chats) || isObject(value.personal_information)) return "telegram";
  // One chat: its id, or (older exports and tools that write no id) its type or its messages' times.
  if (Array.isArray(value.messages)) {
    const first: unknown = value.messages[0];
    if (
      typeof value.id === "number" ||
      TELEGRAM_CHAT_TYPES.includes(value.type as string) ||
      (isObject(first) && "date_unixtime" in (first as object))
    )
      return "telegram";
  }
  return undefined;
}

async function detectFolder(path: string): Promise<ExportFormat> {
  const names = new Set(await readdir(path));
  if (names.has("channels.json") || names.has("users.json")) return "slack";
  if (names.has("result.json")) return "telegram";
  const found = new Set<ExportFormat>();
  for (const file of (await listFiles(path)).filter((f) =>
    /\.(json|jsonl|txt|log|weechatlog)$/i.test(f),
  )) {
    const format = detectText(await fileHead(file));
    if (format) found.add(format);
  }
  if (found.size === 1) return [...found][0];
  if (found.size > 1) {
    throw new ExportInputError(
      path,
      `a folder mixing ${[...found].join(" and ")} exports: give each its own input`,
    );
  }
  throw new ExportInputError(
    path,
    "a folder holding no export convoseg reads (Slack's channels.json, DiscordChatExporter .json files, ...)",
  );
}

/** The files of a folder given as a one-file format (Telegram, Mattermost, WhatsApp, IRC): each input file. */
export async function formatFiles(path: string, format: ExportFormat): Promise<string[]> {
  if (!(await stat(path)).isDirectory()) return [path];
  if (format === "telegram") {
    const result = join(path, "result.json");
    if ((await stat(result).catch(() => undefined))?.isFile()) return [result];
  }
  const ext =
    format === "mattermost"
      ? /\.jsonl$/i
      : format === "whatsapp"
        ? /\.txt$/i
        : format === "irc"
          ? IRC_LOG_FILE
          : /\.json$/i;
  const files = (await listFiles(path)).filter((f) => ext.test(f));
  if (files.length === 0) throw new ExportInputError(path, `no ${format} file in this folder`);
  return files;
}
