/**
 * What `run` prints when it is done: first what was learned (each channel's top topics, how many
 * conversations support each and when), then the counts and the time, the internals only when
 * asked (`--verbose`), and last the commands to try next. Pure: a {@link RunSummary} in, text out.
 */
import { pathToFileURL } from "node:url";
import { formatDuration } from "convoseg/duration";
import { channelLabel } from "convoseg/identity";
import type { Topic } from "convoseg/knowledge/read";
import {
  escapeControls,
  formatCount,
  formatSpan,
  isoMinute,
  plural,
  shellArg,
} from "../shared/format.js";
import { shownPath, workspaceFlag } from "../shared/workspace-option.js";

/** Channels whose topics the summary lists; the others are counted. */
export const SUMMARY_CHANNELS = 8;
/** Topics listed per channel. */
export const SUMMARY_TOPICS = 5;

export interface RunSummary {
  messages: number;
  /** Every channel of the input, busiest (most segments) first. */
  channels: ChannelSummary[];
  segments: number;
  wallMs: number;
  /** Null when extraction was off (`--extractor none`). */
  extraction: ExtractionSummary | null;
  /** The `--report` file written, as an absolute path. */
  report?: { path: string; bytes: number };
  /** The workspace the run worked on (none: tables elsewhere, AWS_ENDPOINT_URL_DYNAMODB). */
  workspace?: WorkspaceSummary;
  internals: RunInternals;
}

/** What the workspace holds after the run. */
export interface WorkspaceSummary {
  /** Absolute. */
  dir: string;
  /** Segments an earlier command delivered and did not extract, extracted first. */
  resumed: number;
  channels: number;
  /** Every segment delivered on it, by this run and earlier ones, and how many have a result. */
  segments: number;
  extracted: number;
}

export interface ChannelSummary {
  name: string;
  /** The channel's display name (an export's `general` for `C0GENERAL`), when it has one. */
  displayName?: string;
  messages: number;
  segments: number;
  /**
   * In linked mode, the conversations its segments were of: the distinct `conversation`s the
   * reply linker named, and its threads. Absent otherwise: each segment is a conversation.
   */
  conversations?: number;
  /** Epoch ms of its first and last message. */
  first: number;
  last: number;
  /** Its top topics, most supported first (at most {@link SUMMARY_TOPICS}). */
  topics: Topic[];
  /** How many questions its segments asked, how many are unanswered, and how many unclear. */
  questions?: { total: number; unanswered: number; unclear?: number };
}

export interface ExtractionSummary {
  /** `offline` or the service of the model. */
  offline: boolean;
  model: string;
  /** The route as the results' prompt version names it: `sliding 60/6`. */
  route: string;
  extracted: number;
  givenUp: number;
  retried: number;
  calls: number;
  inputTokens: number;
  cacheReadTokens: number;
  outputTokens: number;
}

interface RunInternals {
  ticks: number;
  tickMs: number;
  lateSegments: number;
  notStored: number;
  lateMessages: number;
  droppedMessages: number;
  channelErrors: number;
  /** Items read per message: from the messages table, and from the channels table. */
  messageItemReads: number;
  channelItemReads: number;
  /** With `--ask-links`: links asked of the model, answers taken, and batches that failed. */
  links?: { asked: number; advised: number; failures: number };
}

/** The summary as `run` prints it; `verbose` adds the internals. */
export function formatRunSummary(summary: RunSummary, verbose: boolean): string {
  const lines = [...learned(summary), "", counts(summary)];
  if (summary.workspace !== undefined) lines.push(kept(summary.workspace));
  if (verbose) lines.push("", ...internals(summary));
  lines.push("", ...nextCommands(summary));
  return `${lines.join("\n")}\n`;
}

function learned({ channels, extraction }: RunSummary): string[] {
  const shown = channels.slice(0, SUMMARY_CHANNELS);
  const lines = [
    extraction === null
      ? "Extraction was off (--extractor none): the conversations, by channel:"
      : `What was talked about, by channel (${extraction.offline ? "offline keyphrase extractor, no LLM" : escapeControls(extraction.model)}):`,
  ];
  for (const channel of shown) {
    lines.push(
      "",
      escapeControls(
        `${labelOf(channel)}: ${plural(channel.messages, "message")} in ${conversationsOf(channel)}, ${formatSpan(channel.first, channel.last, "minute")} UTC`,
      ),
    );
    if (extraction === null) continue;
    const asked = channel.questions;
    if (channel.topics.length === 0) {
      lines.push("  no topics extracted");
      if (asked !== undefined && asked.total > 0) lines.push(questionsLine(asked));
      continue;
    }
    const names = channel.topics.map((t) => clip(escapeControls(t.topic), 40));
    const width = Math.max(...names.map((n) => n.length));
    const supports = channel.topics.map((t) => plural(t.segments, "conversation"));
    const supportWidth = Math.max(...supports.map((s) => s.length));
    channel.topics.forEach((topic, i) => {
      lines.push(
        `  ${names[i].padEnd(width)}  ${supports[i].padEnd(supportWidth)}  ${formatSpan(topic.firstSeen, topic.lastSeen, "day")}`,
      );
    });
    if (asked !== undefined && asked.total > 0) lines.push(questionsLine(asked));
  }
  const hidden = channels.length - shown.length;
  if (hidden > 0) {
    lines.push(
      "",
      `… and ${plural(hidden, "more channel")} (npm start -- topics <channel> lists any channel's topics)`,
    );
  }
  return lines;
}

function questionsLine({ total, unanswered, unclear = 0 }: QuestionCounts): string {
  // The words and counts the report, the digest and `questions` use.
  const open = unclear > 0 ? `, ${formatCount(unclear)} unclear` : "";
  return `  ${plural(total, "question")} asked, ${formatCount(unanswered)} unanswered${open}`;
}

type QuestionCounts = NonNullable<ChannelSummary["questions"]>;

/**
 * `4 conversations` (a segment each), or in linked mode `312 conversations (340 segments)`: a
 * conversation cut at its lulls takes several.
 */
function conversationsOf({ conversations, segments }: ChannelSummary): string {
  if (conversations === undefined) return plural(segments, "conversation");
  return `${plural(conversations, "conversation")} (${plural(segments, "segment")})`;
}

function counts({
  messages,
  channels,
  segments,
  extraction,
  wallMs,
  workspace,
}: RunSummary): string {
  const linked = channels.some((c) => c.conversations !== undefined);
  const conversations = channels.reduce((sum, c) => sum + (c.conversations ?? 0), 0);
  const parts = [
    `${plural(messages, "message")} in ${plural(channels.length, "channel")}`,
    linked
      ? `${plural(conversations, "conversation")} in ${plural(segments, "segment")}`
      : `${plural(segments, "segment")} (conversations)`,
  ];
  if (extraction !== null) {
    let extracted = `${formatCount(extraction.extracted)} of ${formatCount(segments)} extracted`;
    if (!extraction.offline) {
      extracted += ` (${plural(extraction.calls, "LLM call")}, ${formatCount(extraction.inputTokens)} input and ${formatCount(extraction.outputTokens)} output tokens)`;
    }
    parts.push(extracted);
    // Extracted too, but not of this run's deliveries: said, so the counts add up.
    const resumed = workspace?.resumed ?? 0;
    if (resumed > 0)
      parts.push(`and ${plural(resumed, "segment")} an earlier command left, taken up first`);
  }
  const line = `${parts.join(", ")}; ${seconds(wallMs)}.`;
  const left = extraction === null ? 0 : segments - extraction.extracted;
  if (left === 0) return line;
  return `${line}\nNot extracted: ${plural(left, "segment")} (see why above); fix the cause, then run the same command again.`;
}

function kept({ dir, channels, segments, extracted }: WorkspaceSummary): string {
  const name = shownPath(dir);
  return escapeControls(
    `Kept in the workspace ${name}: ${plural(segments, "segment")} of ${plural(channels, "channel")}, ${formatCount(extracted)} extracted (a next run appends to it; --fresh starts it anew).`,
  );
}

function internals({ internals: i, extraction }: RunSummary): string[] {
  const lines = [
    "Details:",
    `  ${plural(i.ticks, "tick")} ${formatDuration(i.tickMs)} apart on the simulated clock; DynamoDB items read per message: ${i.messageItemReads.toFixed(2)} message items, ${i.channelItemReads.toFixed(2)} channel state and due index items`,
    `  late segments ${i.lateSegments}; messages not stored ${i.notStored}, late ${i.lateMessages}, dropped ${i.droppedMessages} (below --min-items); channel errors ${i.channelErrors}`,
  ];
  if (i.links !== undefined) {
    lines.push(
      `  links asked of the model (--ask-links): ${formatCount(i.links.asked)}, answers taken ${formatCount(i.links.advised)}; batches failed ${formatCount(i.links.failures)} (the linker's own links kept)`,
    );
  }
  if (extraction !== null) {
    lines.push(
      escapeControls(
        `  extraction (${extraction.model}, route ${extraction.route}): ${formatCount(extraction.calls)} LLM calls, input tokens ${formatCount(extraction.inputTokens)} (cache reads ${formatCount(extraction.cacheReadTokens)}), output tokens ${formatCount(extraction.outputTokens)}; ${formatCount(extraction.retried)} failed attempts retried, ${formatCount(extraction.givenUp)} given up`,
      ),
    );
  }
  return lines;
}

function nextCommands({ channels, extraction, report, workspace }: RunSummary): string[] {
  const rows: [string, string][] = [];
  // The commands below read the default workspace unless told another: say the run's.
  const other = workspace === undefined ? "" : workspaceFlag(workspace.dir);
  const busiest = channels.find((c) => c.topics.length > 0);
  if (extraction !== null && busiest !== undefined) {
    rows.push([
      // The id, which every command takes: a name may be another channel's too. A Telegram
      // group's id starts with '-': after '--' it is not read as an option.
      `npm start -- topics${other} ${busiest.name.startsWith("-") ? "-- " : ""}${shellArg(busiest.name)}`,
      `every topic of ${labelOf(busiest)}, with the messages that support it`,
    ]);
  }
  const waiting = channels
    .filter((c) => (c.questions?.unanswered ?? 0) > 0)
    .sort((a, b) => (b.questions?.unanswered ?? 0) - (a.questions?.unanswered ?? 0))[0];
  if (extraction !== null && waiting !== undefined) {
    rows.push([
      `npm start -- questions${other} ${waiting.name.startsWith("-") ? "-- " : ""}${shellArg(waiting.name)} --status unanswered`,
      `the questions of ${labelOf(waiting)} nobody answered, oldest first`,
    ]);
  }
  if (report !== undefined) {
    rows.push([
      pathToFileURL(report.path).href,
      `the report it wrote (${(report.bytes / 1e6).toFixed(1)} MB): open it in a browser`,
    ]);
  } else {
    rows.push([
      `npm start -- report${other} --open`,
      "the report in a browser: the topics first, then every conversation",
    ]);
  }
  const width = Math.max(...rows.map(([command]) => command.length));
  return ["Next:", ...rows.map(([command, what]) => `  ${command.padEnd(width)}  ${what}`)];
}

/** `general (C0GENERAL)`: the name people know the channel by, and the id commands take. */
function labelOf({ name, displayName }: ChannelSummary): string {
  return escapeControls(channelLabel(name, displayName));
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function seconds(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** Where the replay is: the simulated time, messages ingested of all, segments delivered. */
export interface ReplayStatus {
  now: number;
  ingested: number;
  total: number;
  delivered: number;
}

/**
 * The replay's status line. `extracted` counts this replay's deliveries only (undefined without
 * extraction): segments an earlier command left are extracted too, and said apart, so that no
 * line shows more extracted than delivered.
 */
export function replayLine(p: ReplayStatus, extracted: number | undefined, resumed = 0): string {
  const line = `replay: ${isoMinute(p.now)}, ${formatCount(p.ingested)} of ${plural(p.total, "message")} ingested, ${plural(p.delivered, "segment")} delivered`;
  if (extracted === undefined) return line;
  return `${line}, ${formatCount(Math.min(extracted, p.delivered))} of them extracted${earlier(resumed)}`;
}

/** The line while the last extractions finish: of this run's deliveries, as {@link replayLine}. */
export function finishingLine(delivered: number, extracted: number, resumed: number): string {
  return `extraction: ${formatCount(Math.min(extracted, delivered))} of ${plural(delivered, "segment")} extracted${earlier(resumed)}, finishing`;
}

/** The segments an earlier command left, said beside this run's (nothing when none). */
const earlier = (resumed: number): string =>
  resumed > 0 ? ` (and ${formatCount(resumed)} an earlier command left)` : "";

/** What a run's end says about its input and work, as counts. */
export interface RunCounts {
  /** Input lines left out by `--skip-invalid` (each already reported). */
  skipped: number;
  /** Valid messages the store did not confirm. */
  notStored: number;
  /** Messages not stored because their ids are taken (each already explained on its own line). */
  taken: number;
  /** Segments delivered and not extracted. */
  notExtracted: number;
}

/**
 * How `run` ends: its last stderr lines and its exit code. Lines skipped on purpose
 * (`--skip-invalid`) are counted and do not fail the run; a valid message that was not stored
 * does, with or without `--skip-invalid`: the user asked to skip bad lines, not to lose good ones.
 */
export function runEnding({ skipped, notStored, taken, notExtracted }: RunCounts): {
  lines: string[];
  code: 0 | 1;
} {
  const lines: string[] = [];
  if (skipped > 0) {
    lines.push(`run: ${plural(skipped, "invalid line")} skipped (--skip-invalid; listed above)`);
  }
  if (notStored > 0)
    lines.push(`run: ${plural(notStored, "valid message")} not stored (see above)`);
  return { lines, code: notStored > 0 || taken > 0 || notExtracted > 0 ? 1 : 0 };
}
