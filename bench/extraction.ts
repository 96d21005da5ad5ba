/**
 * What each extraction route costs and what context it keeps on chat, offline. Every message
 * becomes one user turn with its author; each channel is cut into closed segments by the project's
 * segmenter (settle 24h, `--max-size`, default 500); and each segment's turns go through the real
 * Analyzer, one call at a time, with a model that records its prompt and answers no candidates.
 * Per route, one table row:
 * - LLM calls per 1,000 messages;
 * - input tokens per message and per call: every prompt sent, counted with gpt-tokenizer's
 *   o200k_base encoding;
 * - repeated prefix: the share of input tokens that repeat the start of the segment's previous
 *   prompt (the longest common prefix by characters, tokenized), which a prefix cache can serve;
 * - messages shown: the share of messages that are in at least one window;
 * - links kept: the share of annotated reply links (message A replies to message B) whose two
 *   messages are in one window of the route; links across segments are never kept;
 * - near links kept (sliding routes): the same share among the links whose target lies fewer than
 *   `windowSize` messages before the reply in its segment, which a window can always hold.
 * Each sliding size runs twice: as before, and `+replies`, each turn carrying its message's id and
 * its earliest annotated parent as `replyTo`, so that the analyzer's reply-aware windows (and the
 * render's reply notes) apply.
 *
 *   npm run bench:extraction                     the annotated IRC files of ../shared/data/irc/
 *   npm run bench:extraction -- --input FILE     another chat file (JSON lines; links: replyTo)
 *   npm run bench:extraction -- --max-size 100   another segment ceiling, in messages
 *   npm run bench:extraction -- --json           the numbers as one JSON object
 *
 * The corpus is the 32 annotated files (every `*.jsonl` but `ubuntu-stream.jsonl`), each a channel
 * of its own (their ids are line numbers, which repeat across files), links from `replyTo`. When
 * the directory is absent, generated chat with reply links stands in, and the header says so.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Analyzer, type LLM, replyTargets, type Turn } from "convoseg/extraction";
import {
  type AuthoredTurn,
  additionalPrompt,
  extractPrompt,
  renderTurns,
  SYSTEM_PROMPT,
} from "convoseg/extraction/prompts";
import { compareRefs, MAX_TIMESTAMP_MS } from "convoseg/identity";
import { type ChatMessage, parseChatMessage } from "convoseg/messages";
import { ConversationSegmenter, DEFAULT_MAX_SIZE, DEFAULT_SETTLE_MS } from "convoseg/segmenter";
import {
  plainWindowCount,
  slidingWindowSpans,
  splitNonPrefixWindows,
  splitPrefixWindows,
} from "convoseg/windows";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { random } from "../local/sample.js";
import { benchArgs, usageError } from "./args.js";

// ---------------------------------------------------------------------------------------------
// Measuring (pure)

/** A run of a segment's messages shown in one call: positions `start` to `end` (exclusive). */
export interface Span {
  start: number;
  end: number;
}

/** Where a message is: its segment and its position in that segment. */
export interface Place {
  segment: number;
  position: number;
}

/** A reply link as the places of its two messages. */
export type PlacedLink = readonly [Place, Place];

/** The length of the longest common prefix of `a` and `b`, never splitting a surrogate pair. */
export function commonPrefixLength(a: string, b: string): number {
  const limit = Math.min(a.length, b.length);
  let length = 0;
  while (length < limit && a.charCodeAt(length) === b.charCodeAt(length)) length++;
  const last = a.charCodeAt(length - 1);
  return length > 0 && length < limit && last >= 0xd800 && last <= 0xdbff ? length - 1 : length;
}

/**
 * The tokens of every prompt (`segments[s]` holds segment `s`'s prompts in the order sent), and
 * of the part of each that repeats the start of the previous prompt of its segment.
 */
export function promptTokens(
  segments: readonly (readonly string[])[],
  count: (text: string) => number,
): { input: number; repeated: number } {
  let input = 0;
  let repeated = 0;
  for (const prompts of segments) {
    prompts.forEach((prompt, i) => {
      input += count(prompt);
      if (i === 0) return;
      const shared = commonPrefixLength(prompts[i - 1], prompt);
      if (shared > 0) repeated += count(prompt.slice(0, shared));
    });
  }
  return { input, repeated };
}

/**
 * How many links have both messages in one window (`windows[s]`: segment `s`'s windows), and how
 * many join two segments, which no window can hold.
 */
export function linksKept(
  links: readonly PlacedLink[],
  windows: readonly (readonly Span[])[],
): { kept: number; acrossSegments: number } {
  let kept = 0;
  let acrossSegments = 0;
  for (const [a, b] of links) {
    if (a.segment !== b.segment) {
      acrossSegments++;
      continue;
    }
    if (inOneWindow(a.position, b.position, windows[a.segment])) kept++;
  }
  return { kept, acrossSegments };
}

/**
 * The links fewer than `windowSize` messages apart in one segment, which one window can always
 * hold (a line the annotators linked to itself, which starts a conversation, is no reply), and
 * how many of them have both messages in one window.
 */
export function nearLinksKept(
  links: readonly PlacedLink[],
  windows: readonly (readonly Span[])[],
  windowSize: number,
): { near: number; kept: number } {
  let near = 0;
  let kept = 0;
  for (const [a, b] of links) {
    const distance = Math.abs(a.position - b.position);
    if (a.segment !== b.segment || distance === 0 || distance >= windowSize) continue;
    near++;
    if (inOneWindow(a.position, b.position, windows[a.segment])) kept++;
  }
  return { near, kept };
}

function inOneWindow(a: number, b: number, windows: readonly Span[]): boolean {
  const first = Math.min(a, b);
  const last = Math.max(a, b);
  return windows.some((w) => w.start <= first && last < w.end);
}

/**
 * `count`, summed over a text's lines and remembering each line's count, so that the instructions
 * and turns that many prompts share are tokenized once. Exact for o200k_base: its pre-tokenizer
 * never joins a line break to a letter after it, and lines are cut only there.
 */
export function lineWiseCounter(count: (text: string) => number): (text: string) => number {
  const counts = new Map<string, number>();
  return (text) => {
    let total = 0;
    for (const line of text.split(/(?<=\n)(?=\p{L})/u)) {
      let tokens = counts.get(line);
      if (tokens === undefined) {
        tokens = count(line);
        counts.set(line, tokens);
      }
      total += tokens;
    }
    return total;
  };
}

/** How many positions of all segments at least one window covers. */
export function messagesShown(windows: readonly (readonly Span[])[]): number {
  let shown = 0;
  for (const spans of windows) {
    let coveredTo = 0;
    for (const { start, end } of [...spans].sort((x, y) => x.start - y.start)) {
      shown += Math.max(0, end - Math.max(start, coveredTo));
      coveredTo = Math.max(coveredTo, end);
    }
  }
  return shown;
}

// ---------------------------------------------------------------------------------------------
// Corpus

const CORPUS_DIR = fileURLToPath(new URL("../../shared/data/irc/", import.meta.url));
const UNANNOTATED = "ubuntu-stream.jsonl";

interface Corpus {
  description: string;
  messages: ChatMessage[];
  /** Reply links as the keys of the replying message and the one it replies to. */
  links: [string, string][];
  /** By a message's key, the id of its earliest parent but itself: its `replyTo`. */
  replyTo: Map<string, string>;
}

const keyOf = (channel: string, id: string) => `${channel}\n${id}`;

/** The messages of a JSON-lines chat file and its `replyTo` links; `channel` overrides theirs. */
function readChatFile(path: string, channel?: string): Omit<Corpus, "description"> {
  const messages: ChatMessage[] = [];
  const links: [string, string][] = [];
  const replyTo = new Map<string, string>();
  readFileSync(path, "utf8")
    .split("\n")
    .forEach((line, index) => {
      if (line.trim() === "") return;
      let message: ChatMessage;
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line);
        message = parseChatMessage(channel === undefined ? record : { ...record, channel });
      } catch (error) {
        throw new Error(`${path}:${index + 1}: ${(error as Error).message}`);
      }
      messages.push(message);
      const parents = Array.isArray(record.replyTo) ? record.replyTo : [];
      for (const parent of parents) {
        links.push([keyOf(message.channel, message.id), keyOf(message.channel, String(parent))]);
      }
      const earlier = parents.map(Number).filter((p) => String(p) !== message.id);
      if (earlier.length > 0) {
        replyTo.set(keyOf(message.channel, message.id), String(Math.min(...earlier)));
      }
    });
  return { messages, links, replyTo };
}

function loadCorpus(input: string | undefined): Corpus {
  if (input !== undefined) {
    return { ...readChatFile(input), description: basename(input) };
  }
  if (!existsSync(CORPUS_DIR)) {
    return {
      ...generatedChat(random(7)),
      description: "generated chat (../shared/data/irc/ is absent)",
    };
  }
  const files = readdirSync(CORPUS_DIR)
    .filter((name) => name.endsWith(".jsonl") && name !== UNANNOTATED)
    .sort();
  const read = files.map((name) => readChatFile(join(CORPUS_DIR, name), basename(name, ".jsonl")));
  return {
    messages: read.flatMap((file) => file.messages),
    links: read.flatMap((file) => file.links),
    replyTo: new Map(read.flatMap((file) => [...file.replyTo])),
    description: `${files.length} annotated IRC files of ../shared/data/irc/`,
  };
}

/**
 * Eight channels of bursty chat, where most messages answer one of the last twenty (the nearer
 * the likelier), and now and then a silence beyond settle ends a conversation.
 */
function generatedChat(next: () => number): Omit<Corpus, "description"> {
  const messages: ChatMessage[] = [];
  const links: [string, string][] = [];
  const replyTo = new Map<string, string>();
  for (let c = 0; c < 8; c++) {
    const channel = `chat-${c}`;
    let ts = Date.UTC(2025, 0, 6);
    for (let i = 0; i < 1500; i++) {
      ts += next() < 0.002 ? 2 * DEFAULT_SETTLE_MS : Math.floor(next() * 60) * 1000;
      const words = `message ${i}: ${"lorem ipsum dolor sit amet ".repeat(1 + Math.floor(next() * 4))}`;
      messages.push({
        id: String(i),
        ts,
        channel,
        user: `user${Math.floor(next() * 12)}`,
        text: words.trim(),
      });
      if (i > 0 && next() < 0.8) {
        const back = 1 + Math.floor(next() ** 2 * Math.min(i, 20));
        links.push([keyOf(channel, String(i)), keyOf(channel, String(i - back))]);
        replyTo.set(keyOf(channel, String(i)), String(i - back));
      }
    }
  }
  return { messages, links, replyTo };
}

// ---------------------------------------------------------------------------------------------
// Routes

/** A turn that knows its position in the segment, so a window's span can be read off it. */
interface ChatTurn extends AuthoredTurn {
  position: number;
}

function chatTurn(message: ChatMessage, position: number, replyTo?: string): ChatTurn {
  const turn: ChatTurn = { role: "user", content: message.text ?? "", position };
  if (message.user) turn.author = message.user;
  if (replyTo !== undefined) {
    turn.id = message.id;
    turn.replyTo = replyTo;
  }
  return turn;
}

/** The turn as the bench showed it before replies: no id, no link. */
function withoutLink({ id: _id, replyTo: _replyTo, ...turn }: ChatTurn): ChatTurn {
  return turn;
}

/** The analyzer's defaults, passed to it explicitly so that the windows below are cut alike. */
const PREFIX_STEP = 5;
const MAX_WINDOWS = 8;

/** The analyzer options that pick a route and its window sizes. */
type RouteOptions =
  | { route: "prefix" | "non_prefix" | "full" | "full2" }
  | { route: "sliding"; windowSize: number; overlap: number };

interface RouteCase {
  name: string;
  options: RouteOptions;
  /** Turns carry their id and `replyTo` (else neither, as before replies were read). */
  replies: boolean;
}

const ROUTES: RouteCase[] = [
  ...[
    [10, 1],
    [20, 2],
    [40, 4],
    [60, 6],
    [100, 10],
  ].flatMap(([windowSize, overlap]) =>
    [false, true].map((replies) => ({
      name: `sliding ${windowSize}/${overlap}${replies ? " +replies" : ""}`,
      options: { route: "sliding" as const, windowSize, overlap },
      replies,
    })),
  ),
  { name: "prefix", options: { route: "prefix" }, replies: false },
  { name: "non_prefix", options: { route: "non_prefix" }, replies: false },
  { name: "full", options: { route: "full" }, replies: false },
  { name: "full2", options: { route: "full2" }, replies: false },
];

/** One model call: the turns it shows and its prompt. */
interface Call {
  window: readonly ChatTurn[];
  prompt: string;
}

/** The calls a route makes for a segment, cut as `lib/knowledge/extraction/analyzer.ts` cuts them. */
function callsOf(options: RouteOptions, turns: ChatTurn[]): Call[] {
  const windowCall = (window: ChatTurn[], includeTool: boolean): Call => ({
    window,
    prompt: extractPrompt(renderTurns(window, includeTool), false).text,
  });
  const all = (windows: ChatTurn[][], includeTool: boolean) =>
    windows
      .filter((window) => renderTurns(window, includeTool) !== "")
      .map((window) => windowCall(window, includeTool));
  switch (options.route) {
    case "prefix":
      return all(splitPrefixWindows(turns, PREFIX_STEP, MAX_WINDOWS), true);
    case "non_prefix":
      return all(splitNonPrefixWindows(turns, PREFIX_STEP, MAX_WINDOWS), false);
    case "sliding": {
      const { windowSize, overlap } = options;
      const spans = slidingWindowSpans(
        turns.length,
        windowSize,
        overlap,
        replyTargets(turns),
        plainWindowCount(turns.length, windowSize, overlap),
      );
      return all(
        spans.map(([start, end]) => turns.slice(start, end)),
        false,
      );
    }
    case "full":
      return all([turns], false);
    case "full2": {
      // Its second call shows the whole segment again, asking for topics beyond the (here no)
      // topics of the first.
      const first = all([turns], false);
      const excerpt = renderTurns(turns, false);
      return first.length === 0
        ? []
        : [...first, { window: turns, prompt: additionalPrompt(excerpt, [], false).text }];
    }
  }
}

/** The prompts the real analyzer sends for `turns`, in window order. */
async function promptsSent(options: RouteOptions, turns: readonly Turn[]): Promise<string[]> {
  const prompts: string[] = [];
  const recorder: LLM = {
    chatJSON: async (messages) => {
      prompts.push(messages.find((m) => m.role === "user")?.content ?? "");
      return { candidates: [] };
    },
  };
  const analyzer = new Analyzer(recorder, {
    ...options,
    prefixStep: PREFIX_STEP,
    maxWindows: MAX_WINDOWS,
    maxConcurrency: 1,
  });
  await analyzer.analyze(turns);
  return prompts;
}

interface RouteResult {
  route: string;
  calls: number;
  inputTokens: number;
  repeatedTokens: number;
  messagesShown: number;
  linksKept: number;
  /** Sliding routes: links fewer than `windowSize` messages apart, and those kept. */
  nearLinks?: number;
  nearLinksKept?: number;
}

async function measureRoute(
  route: RouteCase,
  segments: readonly ChatTurn[][],
  links: readonly PlacedLink[],
  count: (text: string) => number,
): Promise<RouteResult> {
  const prompts: string[][] = [];
  const windows: Span[][] = [];
  for (const [s, linked] of segments.entries()) {
    const turns = route.replies ? linked : linked.map(withoutLink);
    const sent = await promptsSent(route.options, turns);
    const calls = callsOf(route.options, turns);
    // The spans measured must be the windows the analyzer showed: a change there fails the bench.
    if (sent.length !== calls.length || sent.some((prompt, i) => prompt !== calls[i].prompt)) {
      throw new Error(
        `${route.name}: segment ${s}: the analyzer cut other windows than this bench`,
      );
    }
    // Every call also sends the system prompt, ahead of the rest: counted, and a shared prefix.
    prompts.push(sent.map((prompt) => `${SYSTEM_PROMPT}\n${prompt}`));
    windows.push(
      calls.map(({ window }) => ({
        start: window[0].position,
        end: window[window.length - 1].position + 1,
      })),
    );
  }
  const tokens = promptTokens(prompts, count);
  const sliding = route.options.route === "sliding" ? route.options.windowSize : 0;
  const result: RouteResult = {
    route: route.name,
    calls: prompts.flat().length,
    inputTokens: tokens.input,
    repeatedTokens: tokens.repeated,
    messagesShown: messagesShown(windows),
    linksKept: linksKept(links, windows).kept,
  };
  if (sliding > 0) {
    const near = nearLinksKept(links, windows, sliding);
    result.nearLinks = near.near;
    result.nearLinksKept = near.kept;
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// The run

interface Segmented {
  segments: ChatTurn[][];
  /** The links whose two messages are both in the corpus, placed. */
  links: PlacedLink[];
  channels: number;
}

function segmentCorpus(corpus: Corpus, maxSize: number): Segmented {
  const byChannel = new Map<string, ChatMessage[]>();
  for (const m of corpus.messages) {
    const channel = byChannel.get(m.channel);
    if (channel) channel.push(m);
    else byChannel.set(m.channel, [m]);
  }
  const segmenter = new ConversationSegmenter({ maxSize, settle: DEFAULT_SETTLE_MS });
  const segments: ChatTurn[][] = [];
  const places = new Map<string, Place>();
  for (const messages of byChannel.values()) {
    messages.sort(compareRefs);
    // The files are history: at the last instant a message can have, every conversation settled.
    for (const segment of segmenter.closedSegments(messages, MAX_TIMESTAMP_MS, (m) => m.ts)) {
      segment.forEach((m, position) => {
        places.set(keyOf(m.channel, m.id), { segment: segments.length, position });
      });
      segments.push(
        segment.map((m, position) =>
          chatTurn(m, position, corpus.replyTo.get(keyOf(m.channel, m.id))),
        ),
      );
    }
  }
  const links = corpus.links.flatMap(([from, to]): PlacedLink[] => {
    const a = places.get(from);
    const b = places.get(to);
    return a && b ? [[a, b]] : [];
  });
  return { segments, links, channels: byChannel.size };
}

const USAGE = `
npm run bench:extraction [-- options]

What each extraction route costs and what context it keeps on chat, offline: LLM calls per
1,000 messages, input tokens per message and call, the repeated prefix a cache can serve, the
messages shown, and the annotated reply links kept inside one window.

  --input FILE     another chat file (JSON lines; reply links from replyTo); default: the
                   annotated IRC files of ../shared/data/irc/, else generated chat
  --max-size N     the segment ceiling in messages (default ${DEFAULT_MAX_SIZE})
  --json           the numbers as one JSON object
  --help           this text
`;

function parseOptions() {
  const values = benchArgs(USAGE, {
    input: { type: "string" },
    "max-size": { type: "string", default: String(DEFAULT_MAX_SIZE) },
    json: { type: "boolean", default: false },
  });
  const maxSize = Number(values["max-size"]);
  if (!Number.isSafeInteger(maxSize) || maxSize < 1) {
    usageError(USAGE, "--max-size must be a positive integer");
  }
  return { input: values.input, maxSize, json: values.json };
}

const integer = (n: number) => Math.round(n).toLocaleString("en-US");
const counted = (n: number, noun: string) => `${integer(n)} ${noun}${n === 1 ? "" : "s"}`;
const decimal = (n: number) =>
  n.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });
const percent = (part: number, whole: number) =>
  whole === 0 ? "–" : `${((100 * part) / whole).toFixed(1)}%`;

function printTable(results: readonly RouteResult[], messages: number, links: number): void {
  const columns = [
    "calls/1k msgs",
    "tokens/msg",
    "tokens/call",
    "repeated prefix",
    "msgs shown",
    "links kept",
    "near links kept",
  ];
  const rows = results.map((r) => [
    decimal((1000 * r.calls) / messages),
    decimal(r.inputTokens / messages),
    integer(r.inputTokens / r.calls),
    percent(r.repeatedTokens, r.inputTokens),
    percent(r.messagesShown, messages),
    percent(r.linksKept, links),
    r.nearLinks === undefined ? "–" : percent(r.nearLinksKept ?? 0, r.nearLinks),
  ]);
  const width = (i: number) => Math.max(columns[i].length, ...rows.map((row) => row[i].length)) + 2;
  const nameWidth = Math.max(...results.map((r) => r.route.length)) + 2;
  const line = (name: string, cells: string[]) =>
    `${name.padEnd(nameWidth)}${cells.map((cell, i) => cell.padStart(width(i))).join("")}`;
  console.log(line("route", columns));
  for (const [i, r] of results.entries()) console.log(line(r.route, rows[i]));
  console.log(
    "repeated prefix: input tokens that start like the segment's previous prompt; msgs shown: in at least one window; links kept: reply links with both messages in one window; near links kept: the same among the links fewer than windowSize messages apart (+replies: the analyzer knows each message's earliest parent as replyTo)",
  );
}

async function main(): Promise<void> {
  const options = parseOptions();
  const corpus = loadCorpus(options.input);
  const { segments, links, channels } = segmentCorpus(corpus, options.maxSize);
  const messages = corpus.messages.length;
  const acrossSegments = links.filter(([a, b]) => a.segment !== b.segment).length;
  const count = lineWiseCounter(countTokens);
  const results: RouteResult[] = [];
  for (const route of ROUTES) results.push(await measureRoute(route, segments, links, count));
  const meanSize = messages / segments.length;
  if (options.json) {
    const corpusSummary = {
      corpus: corpus.description,
      channels,
      messages,
      segments: segments.length,
      maxSize: options.maxSize,
      links: links.length,
      linksAcrossSegments: acrossSegments,
    };
    console.log(
      JSON.stringify({ ...corpusSummary, tokenizer: "o200k_base", routes: results }, null, 2),
    );
    return;
  }
  console.log(
    `Extraction routes on chat: ${corpus.description}, ${counted(channels, "channel")}, ${counted(messages, "message")}, ${counted(segments.length, "segment")} (mean ${counted(meanSize, "message")}; settle 24h, maxSize ${options.maxSize}), ${counted(links.length, "reply link")} (${integer(acrossSegments)} of them across segments, never kept)`,
  );
  console.log(
    `Each message one user turn, its author apart; prompts (the system prompt and the user message) as the Analyzer sends them (prefix step ${PREFIX_STEP}, last ${MAX_WINDOWS} windows); tokens: gpt-tokenizer, o200k_base`,
  );
  console.log("");
  printTable(results, messages, links.length);
}

// Run as a script, not when the test imports the measuring functions.
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
