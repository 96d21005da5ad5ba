/**
 * `disentangle`'s readable summary: per channel its conversations, their sizes, where the links
 * came from, and a few example conversations as the chat reads, made safe for a terminal.
 */
import type { ChatMessage } from "convoseg/messages";
import { escapeControls, formatCount, formatSpan, plural } from "../shared/format.js";
import type { LinkedChannel } from "./conversations.js";

/** How many example conversations a channel shows, of at least how many messages. */
const EXAMPLES = 3;
const EXAMPLE_MIN_SIZE = 3;
/** Messages shown of one example; the rest are counted. */
const EXAMPLE_LINES = 8;
/** Longest text and author shown, in characters (after escaping). */
const TEXT_WIDTH = 100;
const AUTHOR_WIDTH = 24;

/** The size classes of the distribution line: the least size of each. */
const SIZE_CLASSES = [1, 2, 3, 6, 11, 51] as const;

/** One conversation of a channel: its id and its messages' places, in the channel's order. */
interface Conversation {
  id: string;
  members: number[];
}

export function formatSummary(channels: readonly LinkedChannel[]): string {
  if (channels.length === 0) return "no messages\n";
  const out: string[] = [];
  let messages = 0;
  let conversations = 0;
  for (const linked of channels) {
    const grouped = conversationsOf(linked);
    messages += linked.messages.length;
    conversations += grouped.length;
    out.push(...channelSummary(linked, grouped), "");
  }
  out.push(
    `${plural(channels.length, "channel")}, ${plural(messages, "message")}, ${plural(conversations, "conversation")}`,
  );
  return `${out.join("\n")}\n`;
}

function conversationsOf(linked: LinkedChannel): Conversation[] {
  const byId = new Map<string, number[]>();
  linked.conversations.forEach((id, i) => {
    const members = byId.get(id);
    if (members) members.push(i);
    else byId.set(id, [i]);
  });
  return [...byId].map(([id, members]) => ({ id, members }));
}

function channelSummary(linked: LinkedChannel, grouped: Conversation[]): string[] {
  const { messages, decisions } = linked;
  const sizes = grouped.map((c) => c.members.length);
  const multi = sizes.filter((n) => n >= 2).sort((a, b) => a - b);
  const loneSystem = grouped.filter(
    (c) => c.members.length === 1 && messages[c.members[0] as number]?.kind === "system",
  ).length;
  const count = (source: string, parent: boolean) =>
    decisions.filter((d) => d.source === source && (d.parent !== undefined) === parent).length;
  const lines = [
    `channel ${quoted(linked.channel)}: ${plural(messages.length, "message")}, ${plural(grouped.length, "conversation")} (${formatCount(multi.length)} of 2+ messages${loneSystem > 0 ? `, ${formatCount(loneSystem)} lone system ${loneSystem === 1 ? "line" : "lines"}` : ""})`,
    `  conversations by size: ${sizeClasses(sizes)}`,
  ];
  if (multi.length > 0) {
    lines.push(
      `  largest ${formatCount(multi[multi.length - 1] as number)}, median ${median(multi)} (of the conversations of 2+ messages)`,
    );
  }
  const system = count("system", false);
  const merges = decisions.filter((d) => d.merged !== undefined).length;
  lines.push(
    `  links: ${formatCount(count("platform", true))} platform (replyTo, thread), ${formatCount(count("inferred", true))} inferred; ${formatCount(count("inferred", false))} inferred starts${merges > 0 ? `, ${plural(merges, "message")} joining two conversations` : ""}${system > 0 ? `, ${plural(system, "system line")} (never linked)` : ""}`,
  );
  const examples = grouped
    .filter((c) => c.members.length >= EXAMPLE_MIN_SIZE)
    .sort(
      (a, b) =>
        b.members.length - a.members.length || (a.members[0] as number) - (b.members[0] as number),
    )
    .slice(0, EXAMPLES);
  if (examples.length > 0) {
    lines.push(
      `  ${examples.length === 1 ? "the largest conversation" : `the ${examples.length} largest conversations`}:`,
    );
    for (const example of examples) lines.push(...exampleLines(linked, example));
  }
  return lines;
}

/** `1: 40 · 2: 12 · 3–5: 7 · 11–50: 1`, the classes holding none left out. */
function sizeClasses(sizes: number[]): string {
  const counts = SIZE_CLASSES.map(() => 0);
  for (const size of sizes) {
    let k = SIZE_CLASSES.length - 1;
    while ((SIZE_CLASSES[k] as number) > size) k--;
    counts[k] = (counts[k] as number) + 1;
  }
  return SIZE_CLASSES.map((least, k) => {
    const next = SIZE_CLASSES[k + 1];
    const name =
      next === undefined ? `${least}+` : next - 1 === least ? `${least}` : `${least}–${next - 1}`;
    return [name, counts[k] as number] as const;
  })
    .filter(([, n]) => n > 0)
    .map(([name, n]) => `${name}: ${formatCount(n)}`)
    .join(" · ");
}

/** The median of ascending `sorted` (not empty): `4`, or `4.5` between two. */
function median(sorted: number[]): string {
  const mid = Math.floor(sorted.length / 2);
  const value =
    sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return Number.isInteger(value) ? formatCount(value) : value.toFixed(1);
}

/** An example conversation: a heading, then its first messages as `time  author: text`. */
function exampleLines(linked: LinkedChannel, { id, members }: Conversation): string[] {
  const { messages, decisions } = linked;
  const index = new Map(messages.map((m, i) => [m.id, i]));
  const first = messages[members[0] as number] as ChatMessage;
  const last = messages[members[members.length - 1] as number] as ChatMessage;
  const people = new Set(members.map((i) => authorOf(messages[i] as ChatMessage)));
  const outside = index.has(id) ? "" : " (its first message is not in the input)";
  const lines = [
    `  conversation ${quoted(id)}${outside}: ${plural(members.length, "message")}, ${formatCount(people.size)} ${people.size === 1 ? "person" : "people"}, ${formatSpan(first.ts, last.ts, "minute")} UTC`,
  ];
  const oneDay =
    new Date(first.ts).toISOString().slice(0, 10) === new Date(last.ts).toISOString().slice(0, 10);
  for (const i of members.slice(0, EXAMPLE_LINES)) {
    const message = messages[i] as ChatMessage;
    const iso = new Date(message.ts).toISOString();
    const time = oneDay ? iso.slice(11, 19) : `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
    const parent = decisions[i]?.parent;
    const also = decisions[i]?.also;
    const to = (id: string): string => {
      const at = index.get(id);
      return at === undefined
        ? `${quoted(id)}, not in the input`
        : shown(authorOf(messages[at] as ChatMessage) || quoted(id), AUTHOR_WIDTH);
    };
    // A message that joined two conversations names both parents.
    const reply =
      parent === undefined
        ? ""
        : ` (reply to ${to(parent)}${also === undefined ? "" : ` and to ${to(also)}`})`;
    const author = shown(authorOf(message) || "(no name)", AUTHOR_WIDTH);
    lines.push(`    ${time}  ${author}${reply}: ${shown(message.text ?? "", TEXT_WIDTH)}`);
  }
  if (members.length > EXAMPLE_LINES) {
    lines.push(`    … and ${plural(members.length - EXAMPLE_LINES, "more message")}`);
  }
  return lines;
}

const authorOf = (message: ChatMessage): string => message.user ?? message.userId ?? "";

/** A channel or message id as written in the summary: quoted, its controls escaped. */
const quoted = (id: string): string => shown(JSON.stringify(id), 80);

/**
 * Chat text on one line of a terminal: runs of white space (newlines, tabs) as one space,
 * controls, bidi overrides and other invisible characters as `\u001b`-style escapes (an escape
 * sequence in a message shows as text and moves nothing), and cut to `width` characters.
 */
function shown(text: string, width: number): string {
  const safe = escapeControls(text.replace(/\s+/g, " ").trim());
  const characters = Array.from(safe);
  return characters.length <= width ? safe : `${characters.slice(0, width - 1).join("")}…`;
}
