/**
 * A small known report input: channel "help" with a start, a silence cut, a late segment, a size
 * cut and a message in no segment; channel "<i>ops</i>" whose last message is still open; chat
 * text, user names, a channel name and topics that try to inject markup.
 */
import type { ChatMessage } from "convoseg/messages";
import type { CandidatesLine } from "convoseg/pipeline/contract";
import type { SegmentRecord } from "convoseg/report";

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const T0 = Date.UTC(2025, 0, 6, 9);
export const SETTLE = 60 * MINUTE;
/** The ops channel's last message is 28 minutes old: its conversation is still open. */
export const NOW = T0 + 12 * HOUR + 30 * MINUTE;

export const INJECTION = `</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`;
export const OPS = "<i>ops</i>";

const help = (id: string, at: number, text: string): ChatMessage => ({
  id,
  ts: T0 + at,
  channel: "help",
  user: id.endsWith("1") ? "ana" : "bo",
  text,
});

export const MESSAGES: ChatMessage[] = [
  help("h01", 0, "anyone know how to fix the grub bootloader?"),
  help("h02", MINUTE, "I had the same grub bootloader problem last week"),
  help("h03", 2 * MINUTE, "which version are you on? the grub bootloader changed"),
  help("h04", 3 * MINUTE, "thanks, the grub bootloader works now"),
  help("h05", 3 * HOUR, "the wifi driver drops every few minutes"),
  help(
    "h06",
    3 * HOUR + MINUTE,
    "check the logs first, the wifi driver usually says what is wrong",
  ),
  help("h07", 3 * HOUR + 2 * MINUTE, "reinstalling did not help with the wifi driver"),
  help("h08", 3 * HOUR + 3 * MINUTE, "the wiki has a page on the wifi driver"),
  help("h09", 3 * HOUR + 13 * MINUTE, "the wifi driver works after the firmware update"),
  help("h10", 3 * HOUR + 14 * MINUTE, "thanks, the wifi driver is fine now"),
  help("h11", 10 * HOUR, "is the printer setup documented anywhere?"),
  {
    id: "o1",
    ts: T0 + 12 * HOUR,
    channel: OPS,
    user: "<b>mallory</b>",
    text: `deploy notes ${INJECTION}`,
  },
  { id: "o2", ts: T0 + 12 * HOUR + MINUTE, channel: OPS, user: "eve", text: "<em>not bold</em>" },
  { id: "o3", ts: T0 + 12 * HOUR + 2 * MINUTE, channel: OPS, user: "eve", text: "still going" },
];

/** Arrived after "seg-h1" had been delivered; it belongs after it. */
const LATE_MESSAGE: ChatMessage = help("h-late", 2 * HOUR + 59 * MINUTE, "sorry, late reply");

const segment = (
  channel: string,
  segmentId: string,
  messages: ChatMessage[],
  late: string | null = null,
): SegmentRecord => ({
  channel,
  segmentId,
  messageIds: messages.map((m) => m.id),
  late: late !== null,
  belongsAfter: late,
  first: { id: messages[0].id, ts: messages[0].ts },
  last: { id: messages[messages.length - 1].id, ts: messages[messages.length - 1].ts },
});

const ids = (...names: string[]) =>
  names.map((n) => MESSAGES.find((m) => m.id === n) as ChatMessage);

/** In delivery order: the late segment comes after the one that follows the one it belongs after. */
export const SEGMENTS: SegmentRecord[] = [
  segment("help", "seg-h1", ids("h01", "h02", "h03", "h04")),
  segment("help", "seg-h2", ids("h05", "h06", "h07", "h08")),
  segment("help", "seg-late", [LATE_MESSAGE], "seg-h1"),
  segment("help", "seg-h3", ids("h09", "h10")),
  segment(OPS, "seg-o1", ids("o1", "o2")),
];

const usage = {
  calls: 2,
  inputTokens: 100,
  outputTokens: 20,
  cacheReadTokens: 40,
  cacheWriteTokens: 0,
};

export const CANDIDATES: CandidatesLine[] = [
  {
    channel: "help",
    segmentId: "seg-h2",
    model: "test-model",
    promptVersion: "1/sliding-60-6",
    candidates: [
      {
        topic: "wifi driver",
        reason: `they debug the driver ${INJECTION}`,
        confidence: 0.8,
        tags: ["networking"],
        subjective: false,
        wikiWorthy: true,
        messageIds: ["h06", "h07"],
      },
      {
        topic: "firmware",
        reason: "",
        confidence: 0.4,
        tags: [],
        subjective: true,
        messageIds: null,
      },
    ],
    usage,
  },
  {
    channel: OPS,
    segmentId: "seg-o1",
    model: "test-model",
    promptVersion: "1/sliding-60-6",
    candidates: [
      {
        topic: `<img src=x onerror="window.__pwned = 3">`,
        reason: "markup as a topic",
        confidence: 0.5,
        tags: ["<script>"],
        subjective: false,
        messageIds: ["o1", "o1"],
      },
    ],
    usage: { ...usage, calls: 1 },
  },
  {
    channel: "help",
    segmentId: "seg-h1",
    model: "test-model",
    promptVersion: "1/sliding-60-6",
    candidates: [
      {
        topic: "grub bootloader",
        reason: "",
        confidence: 0.9,
        tags: [],
        subjective: false,
        messageIds: ["h01", "h04"],
      },
    ],
    usage: { ...usage, calls: 1, inputTokens: 30, outputTokens: 5, cacheReadTokens: 0 },
  },
  {
    channel: "help",
    segmentId: "seg-h3",
    model: "test-model",
    promptVersion: "1/sliding-60-6",
    candidates: [
      {
        // The same topic as seg-h2's, said otherwise: one topic, two conversations.
        topic: "Wifi  Driver",
        reason: "fixed by the update",
        confidence: 0.6,
        tags: [],
        subjective: false,
        messageIds: ["h09", "h10"],
      },
      {
        topic: "firmware update",
        reason: "",
        confidence: 0.5,
        tags: [],
        subjective: false,
        messageIds: ["h09", "h09"],
      },
    ],
    usage: { ...usage, calls: 1, inputTokens: 30, outputTokens: 5, cacheReadTokens: 0 },
  },
  {
    channel: "help",
    segmentId: "not-delivered",
    model: "test-model",
    promptVersion: "1/sliding-60-6",
    candidates: [],
    usage,
  },
];

export const ALL_MESSAGES = [...MESSAGES, LATE_MESSAGE];
