import { formatDuration, parseDuration } from "convoseg/duration";
import { compareIds } from "convoseg/identity";
import { type ChatMessage, parseTimestamp } from "convoseg/messages";
import type { ConversationMode } from "convoseg/pipeline";
import { ConversationSegmenter, openConversationStart, type ReplyLinks } from "convoseg/segmenter";
import { byChannel } from "./shared/by-channel.js";
import { type Command, command, EXIT } from "./shared/command.js";
import {
  conversationsOption,
  linkedConversations,
  linkInput,
  refuseAskLinksContiguous,
} from "./shared/conversation-streams.js";
import { readChatInput, timezoneOption } from "./shared/export-input.js";
import { escapeControls, formatCount, warnIfMinItemsUnreachable } from "./shared/format.js";
import {
  ASK_LINKS_OPTIONS,
  ASK_LINKS_USAGE,
  askedModel,
  type ChannelAdvice,
  channelAsker,
} from "./shared/link-advice.js";
import { Progress } from "./shared/progress.js";
import { channelOption } from "./shared/read-messages.js";

const SEGMENT_USAGE = `Usage: npm start -- segment <file.jsonl|export|-> [options]

Reads chat messages as JSON lines (fields: id, ts as ISO-8601 or epoch ms, optional channel,
user, text, replyTo, thread) or a chat export (Slack ZIP or folder, DiscordChatExporter, Telegram, Mattermost,
WhatsApp, an IRC log: see import-chat), segments each channel separately and prints its closed
conversation segments. A thread's replies (thread set to its root's id) are segmented as a
stream of their own, listed after their channel's; the root stays in the channel's. The
channel's own messages are, with --conversations linked (the default), linked by the reply linker
(a replyTo taken as given) and each conversation segmented as a stream of its own, named by its
first message's id; with --conversations contiguous, the channel's own timeline is one stream, as
before the linker. A size cut severs the fewest known replies (replyTo) it can; a replyTo
naming no message of its channel is ignored, and counted on stderr. With --ask-links a model is
asked about each channel's least sure links before its conversations are split; how many were
asked, and how many answers changed a link, is said per channel on stderr and in the table.

Options:
  --channel NAME    the channel of lines that name none (default: default)
  --timezone ZONE   the IANA zone of an export's times that carry none (default: this machine's)
  --max-size N      ceiling on one segment, in messages (default 500)
  --settle D        silence that ends a conversation, e.g. 90s, 15m, 24h, 2d or ms (default 24h)
  --min-items N     drop segments with fewer messages (default 1)
  --conversations M linked: one stream per conversation of the reply linker (default);
                    contiguous: the channel's own messages as one stream
${ASK_LINKS_USAGE}
  --now T           current time as ISO-8601 or epoch ms (default: the clock)
  --json            one JSON object per segment instead of a table
  --skip-invalid    report malformed lines and go on without them (default: stop, print nothing)
  -h, --help        this help`;

/** How the segment that starts here was cut from what came before it in its channel. */
type Cut = "start" | "silence" | "size";

interface SegmentReport {
  channel: string;
  /** The thread (its root's id) whose stream the segment is of; null: the channel's own. */
  thread: string | null;
  /** The linked conversation (its first message's id) whose stream it is of; null: none. */
  conversation: string | null;
  index: number;
  messages: ChatMessage[];
  cut: Cut;
  gapBeforeMs: number | null;
}

/** One stream's report: a channel's own, one of its linked conversations', or a thread's. */
interface ChannelReport {
  channel: string;
  thread: string | null;
  conversation: string | null;
  total: number;
  segments: SegmentReport[];
  /** Messages of the trailing conversation that is still open at `now`: withheld, not lost. */
  open: number;
  /** Messages in segments below `--min-items`. */
  dropped: number;
  /** Messages whose `replyTo` names no message of the channel: no link for the cuts. */
  unknownReplies: number;
}

/** A message's reply link as the segmenter reads it (one naming itself was dropped when read). */
const REPLIES: ReplyLinks<ChatMessage> = { id: (m) => m.id, replyTo: (m) => m.replyTo };

const SEGMENT_OPTIONS = {
  channel: { type: "string" },
  timezone: { type: "string" },
  "max-size": { type: "string" },
  settle: { type: "string" },
  "min-items": { type: "string" },
  conversations: { type: "string" },
  ...ASK_LINKS_OPTIONS,
  now: { type: "string" },
  json: { type: "boolean" },
  "skip-invalid": { type: "boolean" },
} as const;

/** `segment`: a JSON-lines chat export's closed conversation segments, per channel. */
export const segmentCommand: Command = command({
  name: "segment",
  usage: SEGMENT_USAGE,
  options: SEGMENT_OPTIONS,
  parse: ({ positionals, values: options }, io) => {
    if (positionals.length !== 1) {
      throw new Error(
        positionals.length === 0
          ? "missing input file (or - for stdin)"
          : "expected one input file",
      );
    }
    const segmenter = new ConversationSegmenter({
      maxSize: integerOption("--max-size", options["max-size"]),
      settle: options.settle === undefined ? undefined : parseDuration(options.settle, "--settle"),
      minItems: integerOption("--min-items", options["min-items"]),
    });
    const conversations = conversationsOption(options.conversations);
    refuseAskLinksContiguous(options["ask-links"] === true, conversations);
    return {
      source: positionals[0],
      channel: channelOption(options.channel),
      timezone: timezoneOption(options.timezone),
      segmenter,
      conversations,
      model: askedModel(options),
      now: options.now === undefined ? io.now() : nowOption(options.now),
      json: options.json ?? false,
      skipInvalid: options["skip-invalid"] ?? false,
    };
  },
  run: async (
    { source, channel, timezone, segmenter, conversations, model, now, json, skipInvalid },
    io,
  ) => {
    warnIfMinItemsUnreachable(io, "segment", segmenter.minItems, segmenter.maxSize);
    const progress = new Progress(io.stderr);
    const read = await readChatInput("segment", source, progress, io, {
      defaultChannel: channel,
      timezone,
      skipInvalid,
      done: "segmented",
    });
    if (read === undefined) return EXIT.failed;
    const channels = byChannel(read.messages);
    const ask = channelAsker("segment", model, progress, io.stderr);
    const advice = new Map<string, ChannelAdvice>();
    const reports: ChannelReport[] = [];
    for (const [i, [channel, messages]] of channels.entries()) {
      const status = `segmenting: channel ${i + 1} of ${channels.length}`;
      progress.update(() => status);
      const ids = new Set(messages.map((m) => m.id));
      for (const [thread, stream] of byStream(messages)) {
        if (thread !== null || conversations === "contiguous") {
          reports.push(
            reportChannel({ channel, thread, conversation: null }, stream, ids, segmenter, now),
          );
          continue;
        }
        // The channel's own stream is asked about before it is split into conversations.
        const asked = await ask(
          channel,
          stream.map((m) => linkInput(m, false)),
          status,
        );
        if (asked !== undefined) advice.set(channel, asked);
        const choices = asked?.choices;
        for (const { conversation, messages } of linkedConversations(stream, { choices })) {
          reports.push(
            reportChannel({ channel, thread, conversation }, messages, ids, segmenter, now),
          );
        }
      }
    }
    progress.finish();
    const unknownReplies = reports.reduce((sum, r) => sum + r.unknownReplies, 0);
    if (unknownReplies > 0) {
      io.stderr.write(
        `segment: ${formatCount(unknownReplies)} replyTo name${unknownReplies === 1 ? "s" : ""} no message of ${unknownReplies === 1 ? "its" : "their"} channel: ignored for cutting\n`,
      );
    }
    io.stdout.write(
      json
        ? formatJsonLines(reports, conversations)
        : formatTable(reports, segmenter, conversations, now, advice),
    );
    return EXIT.ok;
  },
});

function integerOption(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim())) {
    throw new Error(`${name} must be a positive integer (got ${JSON.stringify(text)})`);
  }
  return Number(text);
}

function nowOption(text: string): number {
  try {
    return parseTimestamp(text);
  } catch {
    throw new Error(
      `--now must be ISO-8601 with a time zone or epoch ms (got ${JSON.stringify(text)})`,
    );
  }
}

/**
 * A channel's streams, its own first, then its threads by root id: a reply in a thread (its
 * `thread` set and not its own id) is in its thread's stream, everything else in the channel's.
 */
function byStream(messages: ChatMessage[]): [string | null, ChatMessage[]][] {
  const own: ChatMessage[] = [];
  const threads = new Map<string, ChatMessage[]>();
  for (const message of messages) {
    const root =
      message.thread !== undefined && message.thread !== message.id ? message.thread : null;
    if (root === null) own.push(message);
    else {
      const list = threads.get(root);
      if (list) list.push(message);
      else threads.set(root, [message]);
    }
  }
  const sorted = [...threads].sort(([a], [b]) => compareIds(a, b));
  return [
    ...(own.length > 0 || sorted.length === 0 ? [[null, own] as [null, ChatMessage[]]] : []),
    ...sorted,
  ];
}

/**
 * One stream's segments. `channelIds` are the ids of the whole channel: a `replyTo` naming a
 * message of another stream of it (a reply to its thread's root, or a message the linker put in
 * another conversation) is known, though no link for this stream's cuts.
 */
function reportChannel(
  {
    channel,
    thread,
    conversation,
  }: { channel: string; thread: string | null; conversation: string | null },
  messages: ChatMessage[],
  channelIds: ReadonlySet<string>,
  segmenter: ConversationSegmenter,
  now: number,
): ChannelReport {
  const closed = segmenter.closedSegments(messages, now, (m) => m.ts, undefined, REPLIES);
  const emitted = new Uint8Array(messages.length);
  let position = 0;
  const segments = closed.map((segment, index): SegmentReport => {
    while (messages[position] !== segment[0]) position++;
    emitted.fill(1, position, position + segment.length);
    const gapBeforeMs = position === 0 ? null : segment[0].ts - messages[position - 1].ts;
    const cut: Cut =
      gapBeforeMs === null ? "start" : gapBeforeMs > segmenter.settle ? "silence" : "size";
    position += segment.length;
    return {
      channel,
      thread,
      conversation,
      index: index + 1,
      messages: segment,
      cut,
      gapBeforeMs,
    };
  });
  const openFrom = openConversationStart(messages, segmenter.settle, now);
  let open = 0;
  let dropped = 0;
  emitted.forEach((flag, i) => {
    if (flag) return;
    if (i >= openFrom) open++;
    else dropped++;
  });
  const unknownReplies = messages.filter(
    (m) => m.replyTo !== undefined && !channelIds.has(m.replyTo),
  ).length;
  return {
    channel,
    thread,
    conversation,
    total: messages.length,
    segments,
    open,
    dropped,
    unknownReplies,
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * One JSON line per segment. With linked conversations, `conversation` follows `thread`: the
 * conversation's id, null for a thread's segment; contiguous lines are as before the linker.
 */
function formatJsonLines(reports: ChannelReport[], mode: ConversationMode): string {
  const lines: string[] = [];
  for (const report of reports) {
    for (const s of report.segments) {
      lines.push(
        JSON.stringify({
          channel: s.channel,
          thread: s.thread,
          ...(mode === "linked" ? { conversation: s.conversation } : {}),
          index: s.index,
          first: iso(s.messages[0].ts),
          last: iso(s.messages[s.messages.length - 1].ts),
          count: s.messages.length,
          cut: s.cut,
          gapBeforeMs: s.gapBeforeMs,
          messageIds: s.messages.map((m) => m.id),
        }),
      );
    }
  }
  return lines.length ? `${lines.join("\n")}\n` : "";
}

/**
 * " (N threads)" when some stream is a thread's, with linked conversations " (N conversations,
 * N threads)", else nothing (the line reads as before).
 */
function streamCount(reports: ChannelReport[]): string {
  const conversations = reports.filter((r) => r.conversation !== null).length;
  const threads = reports.filter((r) => r.thread !== null).length;
  const parts = [
    ...(conversations === 0 ? [] : [counted(conversations, "conversation")]),
    ...(threads === 0 ? [] : [counted(threads, "thread")]),
  ];
  return parts.length === 0 ? "" : ` (${parts.join(", ")})`;
}

const counted = (n: number, noun: string) => `${formatCount(n)} ${noun}${n === 1 ? "" : "s"}`;
const tableTime = (ms: number) => iso(ms).replace("T", " ").replace(".000Z", "Z");
const sum = (reports: ChannelReport[], count: (r: ChannelReport) => number) =>
  reports.reduce((total, r) => total + count(r), 0);
const inSegments = (r: ChannelReport) => r.segments.reduce((n, s) => n + s.messages.length, 0);
const cutText = (s: SegmentReport) =>
  s.gapBeforeMs === null ? "-" : `${s.cut} after ${formatDuration(s.gapBeforeMs)}`;
const times = (s: SegmentReport) =>
  `${tableTime(s.messages[0].ts).padEnd(24)}${tableTime(s.messages[s.messages.length - 1].ts).padEnd(24)}${formatCount(s.messages.length).padStart(8)}`;

/**
 * The streams in output order, a channel's linked conversations gathered in one block: each
 * block one stream, or all the conversations of a channel.
 */
function blocks(reports: ChannelReport[]): ChannelReport[][] {
  const out: ChannelReport[][] = [];
  for (const r of reports) {
    const last = out.at(-1);
    const joins =
      r.conversation !== null &&
      last !== undefined &&
      last[0].conversation !== null &&
      last[0].channel === r.channel;
    if (joins) last.push(r);
    else out.push([r]);
  }
  return out;
}

/** A stream's block, as before the linker: its line, and a row per closed segment. */
function streamBlock(r: ChannelReport, mode: ConversationMode): string[] {
  // Linked, a channel's own stream holds only what the linker never links: its system lines.
  const own = mode === "linked" ? " system lines" : "";
  const out = [
    "",
    `channel ${JSON.stringify(r.channel)}${r.thread === null ? own : ` thread ${JSON.stringify(r.thread)}`}: ${counted(r.total, "message")}, ${counted(r.segments.length, "closed segment")} (${counted(inSegments(r), "message")}), ${formatCount(r.open)} open, ${formatCount(r.dropped)} dropped`,
  ];
  if (r.segments.length === 0) return out;
  out.push(
    `${"#".padStart(6)}  ${"first".padEnd(24)}${"last".padEnd(24)}${"messages".padStart(8)}  cut`,
  );
  for (const s of r.segments) {
    out.push(`${String(s.index).padStart(6)}  ${times(s)}  ${cutText(s)}`);
  }
  return out;
}

/**
 * A channel's linked conversations in one block: their totals on one line, then a row per closed
 * segment, each with its conversation (its first message's id) and its index within it.
 */
function conversationsBlock(reports: ChannelReport[], advice?: ChannelAdvice): string[] {
  const segments = reports.flatMap((r) => r.segments);
  const out = [
    "",
    `channel ${JSON.stringify(reports[0].channel)}: ${counted(
      sum(reports, (r) => r.total),
      "message",
    )} in ${counted(reports.length, "linked conversation")}, ${counted(segments.length, "closed segment")} (${counted(sum(reports, inSegments), "message")}), ${formatCount(sum(reports, (r) => r.open))} open, ${formatCount(sum(reports, (r) => r.dropped))} dropped`,
  ];
  if (advice !== undefined) out.push(`  ${adviceCounts(advice)}`);
  if (segments.length === 0) return out;
  const names = segments.map((s) => escapeControls(s.conversation ?? ""));
  const width = Math.max("conversation".length, ...names.map((n) => n.length));
  out.push(
    `  ${"conversation".padEnd(width)}${"#".padStart(4)}  ${"first".padEnd(24)}${"last".padEnd(24)}${"messages".padStart(8)}  cut`,
  );
  segments.forEach((s, i) => {
    out.push(
      `  ${names[i].padEnd(width)}${String(s.index).padStart(4)}  ${times(s)}  ${cutText(s)}`,
    );
  });
  return out;
}

function formatTable(
  reports: ChannelReport[],
  segmenter: ConversationSegmenter,
  mode: ConversationMode,
  now: number,
  advice: ReadonlyMap<string, ChannelAdvice>,
): string {
  const out: string[] = [
    `maxSize ${segmenter.maxSize}, settle ${formatDuration(segmenter.settle)}, minItems ${segmenter.minItems}${mode === "linked" ? ", conversations linked" : ""}, now ${tableTime(now)}`,
  ];
  if (reports.length === 0) out.push("", "no messages");
  for (const block of blocks(reports)) {
    out.push(
      ...(block[0].conversation === null
        ? streamBlock(block[0], mode)
        : conversationsBlock(block, advice.get(block[0].channel))),
    );
  }
  const segments = sum(reports, (r) => r.segments.length);
  const messages = sum(reports, (r) => r.total);
  out.push(
    "",
    `${counted(new Set(reports.map((r) => r.channel)).size, "channel")}${streamCount(reports)}, ${counted(messages, "message")}, ${counted(segments, "closed segment")}`,
  );
  return `${out.join("\n")}\n`;
}

/** `asked the model about N links: M answers changed a link, F batches failed`. */
function adviceCounts({ asked, changed, failures }: ChannelAdvice): string {
  const n = failures.length;
  const failed = n === 0 ? "" : `, ${formatCount(n)} batch${n === 1 ? "" : "es"} failed`;
  return `asked the model about ${counted(asked, "link")}: ${counted(changed, "answer")} changed a link${failed}`;
}
