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
 * Then the segmentation itself, contiguous (each channel's timeline cut by the segmenter, as the
 * routes above are measured) beside linked (each channel's messages linked by the reply linker,
 * their annotated `replyTo` set aside, and each conversation segmented on its own with the same
 * settings, as `segment --conversations linked` does): segments, annotated reply links with both
 * messages in one segment, and the annotated questions whose first annotated answer lands in
 * the question's segment. A question is an annotated person's message that the offline
 * extractor, given it alone, reports as one (a sentence ending in "?", or a short message opening
 * with a question word); it is answered when a later person's message of another author names it
 * in its annotated `replyTo`, and its first answer is the first such message.
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
import { KeyphraseExtractor } from "convoseg/extraction/offline";
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
import { linkedConversations } from "../cli/shared/conversation-streams.js";
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
  /** By a message's key, the ids of every parent its annotation names but itself. */
  parents: Map<string, string[]>;
  /** Whether a message was annotated (the IRC files: ids 1000 on; another file: every one). */
  annotated: (message: ChatMessage) => boolean;
}

/** The first annotated line of each IRC file: the lines before it are unannotated context. */
const FIRST_ANNOTATED = 1000;

const keyOf = (channel: string, id: string) => `${channel}\n${id}`;

type Read = Omit<Corpus, "description" | "annotated">;

/** The messages of a JSON-lines chat file and its `replyTo` links; `channel` overrides theirs. */
function readChatFile(path: string, channel?: string): Read {
  const messages: ChatMessage[] = [];
  const links: [string, string][] = [];
  const replyTo = new Map<string, string>();
  const parentIds = new Map<string, string[]>();
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
        parentIds.set(keyOf(message.channel, message.id), earlier.map(String));
      }
    });
  return { messages, links, replyTo, parents: parentIds };
}

function loadCorpus(input: string | undefined): Corpus {
  if (input !== undefined) {
    return { ...readChatFile(input), description: basename(input), annotated: () => true };
  }
  if (!existsSync(CORPUS_DIR)) {
    return {
      ...generatedChat(random(7)),
      description: "generated chat (../shared/data/irc/ is absent)",
      annotated: () => true,
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
    parents: new Map(read.flatMap((file) => [...file.parents])),
    description: `${files.length} annotated IRC files of ../shared/data/irc/`,
    annotated: (message) => Number(message.id) >= FIRST_ANNOTATED,
  };
}

/**
 * Eight channels of bursty chat, where most messages answer one of the last twenty (the nearer
 * the likelier), and now and then a silence beyond settle ends a conversation.
 */
function generatedChat(next: () => number): Read {
  const messages: ChatMessage[] = [];
  const links: [string, string][] = [];
  const replyTo = new Map<string, string>();
  const parents = new Map<string, string[]>();
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
        parents.set(keyOf(channel, String(i)), [String(i - back)]);
      }
    }
  }
  return { messages, links, replyTo, parents };
}

// ---------------------------------------------------------------------------------------------
// Linked conversations and answered questions (bench:topics measures with them too)

/** How a channel's timeline becomes streams to segment (`segment --conversations`). */
export type Segmentation = "contiguous" | "linked";

/**
 * One channel's closed segments, at the last instant a message can have (the files are history:
 * every conversation has settled). `contiguous`: its timeline in the product's order, as the
 * routes are measured; `linked`: its messages linked by the reply linker in the order given (the
 * file's), their `replyTo` set aside (the annotations are what is measured, no platform's links),
 * each conversation segmented on its own, conversations in the order of their first message.
 */
export function segmentChannel(
  messages: readonly ChatMessage[],
  segmenter: ConversationSegmenter,
  segmentation: Segmentation,
): ChatMessage[][] {
  const streams =
    segmentation === "contiguous"
      ? [[...messages]]
      : linkedConversations(messages, { ignoreReplyTo: true }).map((c) => c.messages);
  return streams.flatMap((stream) =>
    segmenter.closedSegments(stream.sort(compareRefs), MAX_TIMESTAMP_MS, (m) => m.ts),
  );
}

/** An annotated question and its annotated answers. */
export interface AnnotatedQuestion {
  /** The asking message's id. */
  id: string;
  /**
   * The later person's messages of other authors whose annotated `replyTo` names it, in the
   * order given (the file's): the first is its first answer. Empty: unanswered.
   */
  answers: string[];
}

/**
 * A channel's annotated questions, in the order given: each annotated person's message that the
 * offline extractor, given it alone, reports as a question (its own test: a sentence ending in
 * "?" of two words or more, or a short message opening with a question word), with the annotated
 * answers of other authors (`parentsOf`: the ids a message's annotation names as its parents).
 */
export async function annotatedQuestions(
  messages: readonly ChatMessage[],
  annotated: (message: ChatMessage) => boolean,
  parentsOf: (message: ChatMessage) => readonly string[],
): Promise<AnnotatedQuestion[]> {
  const person = (m: ChatMessage) => m.kind !== "system" && m.kind !== "bot";
  const voice = (m: ChatMessage) => (m.user ?? m.userId ?? "").toLowerCase();
  const extractor = new KeyphraseExtractor();
  const questions = new Map<string, { asker: string; answers: string[] }>();
  for (const m of messages) {
    if (!person(m)) continue;
    for (const parent of parentsOf(m)) {
      const question = questions.get(parent);
      if (question !== undefined && question.asker !== voice(m)) question.answers.push(m.id);
    }
    if (!annotated(m)) continue;
    const turn = { role: "user", kind: "user" as const, text: m.text ?? "", id: m.id };
    const alone = await extractor.extract(m.user ? [{ ...turn, author: m.user }] : [turn]);
    if ((alone.questions ?? []).length > 0) questions.set(m.id, { asker: voice(m), answers: [] });
  }
  return [...questions].map(([id, { answers }]) => ({ id, answers }));
}

/**
 * Of the questions, how many are answered, and how many of those have their first answer in the
 * question's own segment (`segmentOf`: a message id's segment, per channel).
 */
export function answeredInSegment(
  questions: readonly AnnotatedQuestion[],
  segmentOf: (id: string) => number | undefined,
): { answered: number; inSegment: number } {
  let answered = 0;
  let inSegment = 0;
  for (const { id, answers } of questions) {
    if (answers.length === 0) continue;
    answered++;
    const segment = segmentOf(id);
    if (segment !== undefined && segment === segmentOf(answers[0] as string)) inSegment++;
  }
  return { answered, inSegment };
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
  /** Where each message is, by its key. */
  places: Map<string, Place>;
  channels: number;
}

/** The corpus's channels, each with its messages in file order. */
function channelsOf(corpus: Corpus): Map<string, ChatMessage[]> {
  const byChannel = new Map<string, ChatMessage[]>();
  for (const m of corpus.messages) {
    const channel = byChannel.get(m.channel);
    if (channel) channel.push(m);
    else byChannel.set(m.channel, [m]);
  }
  return byChannel;
}

function segmentCorpus(corpus: Corpus, maxSize: number, segmentation: Segmentation): Segmented {
  const byChannel = channelsOf(corpus);
  const segmenter = new ConversationSegmenter({ maxSize, settle: DEFAULT_SETTLE_MS });
  const segments: ChatTurn[][] = [];
  const places = new Map<string, Place>();
  for (const messages of byChannel.values()) {
    for (const segment of segmentChannel(messages, segmenter, segmentation)) {
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
  return { segments, links, places, channels: byChannel.size };
}

/** What a segmentation does to the corpus's conversations (the routes aside). */
interface SegmentationResult {
  segmentation: Segmentation;
  segments: number;
  /** Annotated reply links with both messages in the corpus, and those within one segment. */
  links: number;
  linksInSegment: number;
  /** Annotated questions, those answered, and those whose first answer is in their segment. */
  questions: number;
  answered: number;
  answeredInSegment: number;
}

function measureSegmentation(
  segmentation: Segmentation,
  { segments, links, places }: Segmented,
  questions: ReadonlyMap<string, readonly AnnotatedQuestion[]>,
): SegmentationResult {
  const counts = { answered: 0, inSegment: 0 };
  for (const [channel, asked] of questions) {
    const found = answeredInSegment(asked, (id) => places.get(keyOf(channel, id))?.segment);
    counts.answered += found.answered;
    counts.inSegment += found.inSegment;
  }
  return {
    segmentation,
    segments: segments.length,
    links: links.length,
    linksInSegment: links.filter(([a, b]) => a.segment === b.segment).length,
    questions: [...questions.values()].reduce((n, asked) => n + asked.length, 0),
    answered: counts.answered,
    answeredInSegment: counts.inSegment,
  };
}

/** Each channel's annotated questions (`annotatedQuestions`), by channel. */
async function corpusQuestions(corpus: Corpus): Promise<Map<string, AnnotatedQuestion[]>> {
  const out = new Map<string, AnnotatedQuestion[]>();
  for (const [channel, messages] of channelsOf(corpus)) {
    out.set(
      channel,
      await annotatedQuestions(
        messages,
        corpus.annotated,
        (m) => corpus.parents.get(keyOf(channel, m.id)) ?? [],
      ),
    );
  }
  return out;
}

const USAGE = `
npm run bench:extraction [-- options]

What each extraction route costs and what context it keeps on chat, offline: LLM calls per
1,000 messages, input tokens per message and call, the repeated prefix a cache can serve, the
messages shown, and the annotated reply links kept inside one window.

Then the segmentation, contiguous (each channel's timeline cut at silences and sizes, as the
routes are measured) beside linked (the reply linker's conversations, the annotated replyTo set
aside, each segmented on its own with the same settings: segment --conversations linked):
  segments          closed segments, and their mean size in messages
  links in segment  annotated reply links with both messages in one segment
  answer in segment annotated questions (a person's annotated message that the offline extractor,
                    given it alone, reports as a question) with an annotated answer (a later
                    message of another author whose replyTo names it): the share whose first
                    answer is in the question's segment

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

function printSegmentation(results: readonly SegmentationResult[], messages: number): void {
  const columns = [
    "segments",
    "mean size",
    "links in segment",
    "questions",
    "answered",
    "answer in segment",
  ];
  const rows = results.map((r) => [
    integer(r.segments),
    decimal(messages / r.segments),
    percent(r.linksInSegment, r.links),
    integer(r.questions),
    integer(r.answered),
    percent(r.answeredInSegment, r.answered),
  ]);
  const width = (i: number) => Math.max(columns[i].length, ...rows.map((row) => row[i].length)) + 2;
  const nameWidth =
    Math.max("segmentation".length, ...results.map((r) => r.segmentation.length)) + 2;
  const line = (name: string, cells: string[]) =>
    `${name.padEnd(nameWidth)}${cells.map((cell, i) => cell.padStart(width(i))).join("")}`;
  console.log(line("segmentation", columns));
  for (const [i, r] of results.entries()) console.log(line(r.segmentation, rows[i]));
  console.log(
    "contiguous: each channel's timeline cut at silences and sizes (the routes above); linked: the reply linker's conversations (annotated replyTo set aside), each segmented on its own alike. links in segment: annotated reply links with both messages in one segment; questions: annotated messages the offline extractor, given each alone, reports as questions; answered: with a later annotated reply of another author; answer in segment: the share of those whose first answer is in the question's segment",
  );
}

async function main(): Promise<void> {
  const options = parseOptions();
  const corpus = loadCorpus(options.input);
  const contiguous = segmentCorpus(corpus, options.maxSize, "contiguous");
  const { segments, links, channels } = contiguous;
  const questions = await corpusQuestions(corpus);
  const segmentation = [
    measureSegmentation("contiguous", contiguous, questions),
    measureSegmentation("linked", segmentCorpus(corpus, options.maxSize, "linked"), questions),
  ];
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
      JSON.stringify(
        { ...corpusSummary, tokenizer: "o200k_base", routes: results, segmentation },
        null,
        2,
      ),
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
  console.log("");
  printSegmentation(segmentation, messages);
}

// Run as a script, not when the test imports the measuring functions.
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
