/**
 * Whether the offline extractor names what was discussed: today's extractor (retext-keywords
 * behind the analyzer, reading the rendered prompt back, `bench/legacy/`) beside the new one
 * (structured turns, the channel's term statistics), in the same run, on the same segments,
 * through the real `SegmentExtractor` on the memory results store. Per extractor:
 * - junk: the share of stored topics that are a participant's name (a word of the topic is an
 *   author or an addressed nick of the channel, case-insensitive), a URL fragment (a word found
 *   inside the channel's URLs and nowhere else in its text), a stopword, or shorter than three
 *   characters;
 * - topics per segment;
 * - evidence: the share of topics each of whose words occurs in the text (not the author) of
 *   the messages of its evidence range;
 * - time per segment (mean) and for the largest segment; and the new extractor alone on one
 *   synthetic segment of 500 messages of 10 KB, with the longest the event loop was held.
 * The new extractor runs three times: on contiguous segments (each channel's timeline cut by the
 * segmenter, as both extractors are measured) and on linked ones (each channel's messages linked
 * by the reply linker, their annotated `replyTo` set aside, each conversation segmented on its own
 * with the same settings, as `segment --conversations linked` does), there with and without each
 * message's inferred parent (the pipeline hands it to extraction). On each, its questions
 * against the annotations (`annotatedQuestions` of bench/extraction.ts: an annotated person's
 * message the extractor, given it alone, reports as a question; answered when a later message of
 * another author names it in its annotated `replyTo`):
 * - answer in segment: the share of the answered questions whose first answer is in the
 *   question's segment (what the extractor can see);
 * - reported: the share of the questions the extractor reports in their segment (it keeps the
 *   first 50 of a segment);
 * - precision, recall and F1 of its "answered" verdict (a question it does not report, or calls
 *   unclear or unanswered, is not answered), and the accuracy of answered / not answered, of all
 *   the questions and of those it reports;
 * - right answer: of the questions it rightly calls answered, the share whose answering messages
 *   include an annotated answer.
 *
 *   npm run bench:topics                     the annotated IRC files, one channel per file
 *   npm run bench:topics -- --input FILE     another chat file (one channel unless it says)
 *   npm run bench:topics -- --show 5         each channel's top 5 topics, before and after
 *   npm run bench:topics -- --stress-before  also time today's extractor on the synthetic segment
 *   npm run bench:topics -- --json           the numbers as one JSON object
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Analyzer, type Extractor } from "convoseg/extraction";
import { KeyphraseExtractor } from "convoseg/extraction/offline";
import { compareRefs } from "convoseg/identity";
import { ANALYZER_DEFAULTS } from "convoseg/knowledge/config";
import { mergeSupports } from "convoseg/knowledge/read";
import {
  MemoryResultStore,
  onTimeEnvelope,
  type SegmentResult,
  type StoredQuestion,
} from "convoseg/knowledge/store";
import { SegmentExtractor } from "convoseg/knowledge/write";
import { ReplyLinker } from "convoseg/linker";
import { type ChatMessage, parseChatMessage } from "convoseg/messages";
import type { InlineMessage } from "convoseg/pipeline/contract";
import { ConversationSegmenter, DEFAULT_MAX_SIZE, DEFAULT_SETTLE_MS } from "convoseg/segmenter";
import { linkInput } from "../cli/shared/conversation-streams.js";
import { random } from "../local/sample.js";
import { benchArgs, usageError } from "./args.js";
import {
  type AnnotatedQuestion,
  annotatedQuestions,
  answeredInSegment,
  type Segmentation,
  segmentChannel,
} from "./extraction.js";
import { KeyphraseExtractor as RetextExtractor } from "./legacy/retext-extractor.js";

// ---------------------------------------------------------------------------------------------
// What counts as junk (pure; tested in test/bench/topics.test.ts)

/**
 * A classic English stopword list (articles, pronouns, prepositions, conjunctions, auxiliaries),
 * the bench's own, independent of the extractor's lists.
 */
const BENCH_STOPWORDS: ReadonlySet<string> = new Set(
  `a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers herself him himself his how i if in into is it its itself just
me more most my myself no nor not now of off on once only or other our ours ourselves out over
own same she should so some such than that the their theirs them themselves then there these they
this those through to too under until up very was we were what when where which while who whom
why will with would you your yours yourself yourselves yes yeah ok okay lol thanks hi hello`
    .split(/\s+/)
    .filter(Boolean),
);

const URL_PATTERN = /(?:[a-z][a-z0-9+.-]*:\/\/|www\.)\S+/giu;
const WORDS = /[\p{L}\p{N}]+/gu;
/** `nick:` / `nick,` opening a message, and `@nick` anywhere. */
const ADDRESSED = /^\s*@?([^\s:,]{1,40})([:,])(?=\s|$)/u;
const MENTION = /(?:^|\s)@([^\s:,.!?]{1,40})/gu;
/** A system line's nick: who joined, left, quit or changed names (`a is now known as b`). */
const SYSTEM_NICK =
  /^(\S+?)(?:\s+\[[^\]]*\])?\s+(?:has|is now known as|was kicked)\b(?:.*\bknown as (\S+))?/u;
/** A token no English word is: digits, underscores, brackets, inner capitals. */
const NICK_SHAPED = /[\p{N}_[\]\\^{}|`]|\p{Ll}\p{Lu}/u;

/**
 * Who took part in a channel (lower case): its authors, the nicks its system lines name (joins,
 * parts, quits, nick changes), `@mentions`, and the nicks its messages address (`nick:` or
 * `nick,` opening a message) that are one of those or shaped as no English word is (a word
 * like "error:" opening a line is a label).
 */
function participantsOf(messages: readonly ChatMessage[]): Set<string> {
  const present = new Set(messages.flatMap((m) => (m.user ? [m.user.toLowerCase()] : [])));
  for (const message of messages) {
    if (message.kind !== "system") continue;
    const match = SYSTEM_NICK.exec(message.text ?? "");
    if (match) for (const nick of match.slice(1)) if (nick) present.add(nick.toLowerCase());
  }
  const names = new Set(present);
  for (const message of messages) {
    if (message.kind === "system") continue;
    const text = message.text ?? "";
    const opening = ADDRESSED.exec(text);
    if (opening) {
      const nick = opening[1].toLowerCase();
      if (present.has(nick) || NICK_SHAPED.test(opening[1])) names.add(nick);
    }
    for (const [, nick] of text.matchAll(MENTION)) names.add(nick.toLowerCase());
  }
  return names;
}

/** Words (lower case) that occur in a channel's URLs and nowhere else in its text. */
function urlFragmentsOf(messages: readonly ChatMessage[]): Set<string> {
  const inside = new Set<string>();
  const outside = new Set<string>();
  for (const message of messages) {
    const text = message.text ?? "";
    for (const [url] of text.matchAll(URL_PATTERN)) {
      for (const [w] of url.toLowerCase().matchAll(WORDS)) inside.add(w);
    }
    for (const [w] of text.replace(URL_PATTERN, " ").toLowerCase().matchAll(WORDS)) outside.add(w);
  }
  return new Set([...inside].filter((w) => !outside.has(w)));
}

type Junk = "name" | "url" | "stopword" | "short";

/** Why a topic is junk, or undefined when it is not. */
function junkOf(
  topic: string,
  channel: { names: ReadonlySet<string>; fragments: ReadonlySet<string> },
): Junk | undefined {
  const lower = topic.toLowerCase().trim();
  if ([...lower].length < 3) return "short";
  const words = lower.split(/\s+/u);
  const parts = [...lower.matchAll(WORDS)].map(([w]) => w);
  if (words.some((w) => channel.names.has(w.replace(/[^\p{L}\p{N}_\-[\]\\^{}|`]/gu, "")))) {
    return "name";
  }
  if (lower.includes("://") || parts.some((w) => channel.fragments.has(w))) return "url";
  if (BENCH_STOPWORDS.has(lower)) return "stopword";
  return undefined;
}

/** Whether each word of `topic` occurs in the text of the messages `first` to `last`. */
function evidenceHolds(
  topic: string,
  messages: readonly { text: string }[],
  range: readonly [number, number] | null,
): boolean {
  if (range === null) return false;
  const text = messages
    .slice(range[0], range[1] + 1)
    .map((m) => m.text.toLowerCase())
    .join("\n");
  return topic
    .toLowerCase()
    .split(/\s+/u)
    .filter(Boolean)
    .every((w) => text.includes(w));
}

// ---------------------------------------------------------------------------------------------
// Corpus

const CORPUS_DIR = fileURLToPath(new URL("../../shared/data/irc/", import.meta.url));
const UNANNOTATED = "ubuntu-stream.jsonl";

/** The first annotated line of each IRC file: the lines before it are unannotated context. */
const FIRST_ANNOTATED = 1000;

const keyOf = (channel: string, id: string) => `${channel}\n${id}`;

interface Corpus {
  description: string;
  /** In file order. */
  messages: ChatMessage[];
  /** By a message's key (channel, id), every parent its `replyTo` names but itself. */
  parents: Map<string, string[]>;
  /** Whether a message was annotated (the IRC files: ids 1000 on; another file: every one). */
  annotated: (message: ChatMessage) => boolean;
}

function readChatFile(
  path: string,
  parents: Map<string, string[]>,
  channel?: string,
): ChatMessage[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .flatMap((line, index) => {
      if (line.trim() === "") return [];
      try {
        const record = JSON.parse(line);
        const message = parseChatMessage(channel === undefined ? record : { ...record, channel });
        const named = (Array.isArray(record.replyTo) ? record.replyTo : [record.replyTo])
          .filter((p: unknown) => p !== undefined && p !== null && String(p) !== message.id)
          .map(String);
        if (named.length > 0) parents.set(keyOf(message.channel, message.id), named);
        return [message];
      } catch (error) {
        throw new Error(`${path}:${index + 1}: ${(error as Error).message}`);
      }
    });
}

export function loadCorpus(input: string | undefined): Corpus {
  const parents = new Map<string, string[]>();
  if (input !== undefined) {
    const messages = readChatFile(input, parents);
    return { description: basename(input), messages, parents, annotated: () => true };
  }
  if (!existsSync(CORPUS_DIR)) {
    throw new Error(`${CORPUS_DIR} is absent: pass --input FILE`);
  }
  const files = readdirSync(CORPUS_DIR)
    .filter((name) => name.endsWith(".jsonl") && name !== UNANNOTATED)
    .sort();
  return {
    description: `${files.length} annotated IRC files of ../shared/data/irc/, one channel per file`,
    messages: files.flatMap((name) =>
      readChatFile(join(CORPUS_DIR, name), parents, basename(name, ".jsonl")),
    ),
    parents,
    annotated: (message) => Number(message.id) >= FIRST_ANNOTATED,
  };
}

export interface Channel {
  name: string;
  messages: ChatMessage[];
  segments: ChatMessage[][];
  names: Set<string>;
  fragments: Set<string>;
}

/**
 * The channels of `messages` (in file order), each cut into closed segments as `segmentation`
 * says (`segmentChannel` of bench/extraction.ts: contiguous, or linked conversations).
 */
export function channelsOf(
  messages: readonly ChatMessage[],
  maxSize: number,
  segmentation: Segmentation = "contiguous",
): Channel[] {
  const byChannel = new Map<string, ChatMessage[]>();
  for (const m of messages) {
    const list = byChannel.get(m.channel);
    if (list) list.push(m);
    else byChannel.set(m.channel, [m]);
  }
  const segmenter = new ConversationSegmenter({ maxSize, settle: DEFAULT_SETTLE_MS });
  return [...byChannel].map(([name, list]) => {
    const segments = segmentChannel(list, segmenter, segmentation);
    list.sort(compareRefs);
    return {
      name,
      messages: list,
      segments,
      names: participantsOf(list),
      fragments: urlFragmentsOf(list),
    };
  });
}

/**
 * The reply linker's parent of each message (by `keyOf`), its annotated `replyTo` set aside: each
 * channel linked in file order, as `segmentChannel` links it for the linked segments.
 */
function inferredParents(messages: readonly ChatMessage[]): Map<string, string> {
  const linkers = new Map<string, ReplyLinker>();
  const parents = new Map<string, string>();
  for (const m of messages) {
    const linker = linkers.get(m.channel) ?? new ReplyLinker();
    linkers.set(m.channel, linker);
    const { parent } = linker.link(linkInput(m, true));
    if (parent !== undefined) parents.set(keyOf(m.channel, m.id), parent);
  }
  return parents;
}

// ---------------------------------------------------------------------------------------------
// Measuring

interface Variant {
  name: string;
  extractor: () => Extractor;
  /** Today's extractor knew no kinds: every line, system lines too, was a turn `author: text`. */
  kinds: boolean;
  /** The segments it is measured on. */
  segmentation: Segmentation;
  /** Whether its questions are measured against the annotations (today's finds none). */
  questions: boolean;
  /**
   * Whether each message carries the reply linker's inferred parent (`inferredReplyTo`), as the
   * pipeline hands linked segments to extraction.
   */
  parents?: boolean;
}

const VARIANTS: Variant[] = [
  {
    name: "before: retext-keywords on the rendered prompt",
    extractor: () => new Analyzer(new RetextExtractor(), ANALYZER_DEFAULTS),
    kinds: false,
    segmentation: "contiguous",
    questions: false,
  },
  {
    name: "after: structured turns, channel TF-IDF",
    extractor: () => new KeyphraseExtractor(),
    kinds: true,
    segmentation: "contiguous",
    questions: true,
  },
  {
    name: "after, linked conversations",
    extractor: () => new KeyphraseExtractor(),
    kinds: true,
    segmentation: "linked",
    questions: true,
  },
  {
    name: "after, linked, inferred parents",
    extractor: () => new KeyphraseExtractor(),
    kinds: true,
    segmentation: "linked",
    questions: true,
    parents: true,
  },
];

/** The extractor's questions against the annotated ones. */
interface Verdicts {
  /** Annotated questions; those answered; those whose first answer is in their segment. */
  questions: number;
  answered: number;
  answerInSegment: number;
  /** Questions the extractor reports in their segment, whatever its verdict. */
  reported: number;
  /** Reported questions whose answered / not answered verdict is right. */
  reportedRight: number;
  /** "answered" verdicts: on answered questions (true), on the others (false). */
  truePositives: number;
  falsePositives: number;
  /** Answered questions it calls unclear or unanswered, or does not report. */
  falseNegatives: number;
  /** True positives whose answering messages include an annotated answer. */
  rightAnswer: number;
}

const noVerdicts = (): Verdicts => ({
  questions: 0,
  answered: 0,
  answerInSegment: 0,
  reported: 0,
  reportedRight: 0,
  truePositives: 0,
  falsePositives: 0,
  falseNegatives: 0,
  rightAnswer: 0,
});

interface Measured {
  variant: string;
  segmentation: Segmentation;
  segments: number;
  topics: number;
  junk: Record<Junk, number>;
  evidence: number;
  totalMs: number;
  largest: { messages: number; ms: number };
  /** Each channel's topics, most supported first. */
  top: Map<string, string[]>;
  /** Each junk topic with its channel and why. */
  junkTopics: string[];
  /** Its questions against the annotations, when they are measured. */
  verdicts?: Verdicts;
}

export function inline(message: ChatMessage, kinds: boolean, parent?: string): InlineMessage {
  const m: InlineMessage = { id: message.id, ts: message.ts, text: message.text ?? "" };
  if (message.user) m.author = message.user;
  if (kinds && message.kind !== undefined) m.kind = message.kind;
  if (parent !== undefined) m.inferredReplyTo = parent;
  return m;
}

async function measure(
  variant: Variant,
  channels: readonly Channel[],
  questions: ReadonlyMap<string, readonly AnnotatedQuestion[]>,
  parents: ReadonlyMap<string, string>,
): Promise<Measured> {
  const store = new MemoryResultStore();
  const extractor = new SegmentExtractor({
    store,
    extractor: variant.extractor(),
    model: variant.name,
    promptVersion: "bench",
  });
  const out: Measured = {
    variant: variant.name,
    segmentation: variant.segmentation,
    segments: 0,
    topics: 0,
    junk: { name: 0, url: 0, stopword: 0, short: 0 },
    evidence: 0,
    totalMs: 0,
    largest: { messages: 0, ms: 0 },
    top: new Map(),
    junkTopics: [],
  };
  if (variant.questions) out.verdicts = noVerdicts();
  for (const channel of channels) {
    const stored = new Map<string, StoredQuestion>();
    for (const [index, segment] of channel.segments.entries()) {
      const messages = segment.map((m) =>
        inline(m, variant.kinds, variant.parents ? parents.get(keyOf(m.channel, m.id)) : undefined),
      );
      const started = performance.now();
      const segmentId = `${channel.name}-${String(index).padStart(4, "0")}`;
      const { result } = await extractor.extract(
        onTimeEnvelope(segmentId, channel.name, messages),
        messages,
      );
      const ms = performance.now() - started;
      out.segments++;
      out.totalMs += ms;
      if (messages.length > out.largest.messages) out.largest = { messages: messages.length, ms };
      tally(out, result, messages, channel);
      for (const question of result.questions ?? []) stored.set(question.askedId, question);
    }
    if (out.verdicts !== undefined) {
      judge(out.verdicts, questions.get(channel.name) ?? [], stored, channel.segments);
    }
    const topics = mergeSupports(await store.listSupports(channel.name));
    out.top.set(
      channel.name,
      topics.map((t) => `${t.topic} (${t.segments})`),
    );
  }
  return out;
}

function tally(
  out: Measured,
  result: SegmentResult,
  messages: readonly InlineMessage[],
  channel: Channel,
): void {
  for (const candidate of result.candidates) {
    out.topics++;
    const junk = junkOf(candidate.topic, channel);
    if (junk !== undefined) {
      out.junk[junk]++;
      out.junkTopics.push(`${channel.name}: ${JSON.stringify(candidate.topic)} (${junk})`);
    }
    if (evidenceHolds(candidate.topic, messages, candidate.turnRange)) out.evidence++;
  }
}

/** Adds a channel's annotated questions, against the questions the extractor stored, by asker. */
function judge(
  verdicts: Verdicts,
  questions: readonly AnnotatedQuestion[],
  stored: ReadonlyMap<string, StoredQuestion>,
  segments: readonly ChatMessage[][],
): void {
  const segmentOf = new Map(segments.flatMap((segment, s) => segment.map((m) => [m.id, s])));
  const placed = answeredInSegment(questions, (id) => segmentOf.get(id));
  verdicts.questions += questions.length;
  verdicts.answered += placed.answered;
  verdicts.answerInSegment += placed.inSegment;
  for (const { id, answers } of questions) {
    const question = stored.get(id);
    const said = question?.status === "answered";
    if (question !== undefined) {
      verdicts.reported++;
      if (said === answers.length > 0) verdicts.reportedRight++;
    }
    if (said && answers.length > 0) {
      verdicts.truePositives++;
      if (question?.answerIds.some((answer) => answers.includes(answer))) verdicts.rightAnswer++;
    } else if (said) verdicts.falsePositives++;
    else if (answers.length > 0) verdicts.falseNegatives++;
  }
}

/** One segment of `count` messages of about `bytes` each: chat-like words, 12 speakers. */
function syntheticSegment(count: number, bytes: number): InlineMessage[] {
  const next = random(19);
  const vocabulary = Array.from({ length: 5000 }, (_, i) => {
    let word = "";
    for (let n = 4 + (i % 6); word.length < n; )
      word += "bcdfghklmnprstvz"[Math.floor(next() * 16)] + "aeiou"[Math.floor(next() * 5)];
    return word;
  });
  return Array.from({ length: count }, (_, i) => {
    const words: string[] = [];
    for (let length = 0; length < bytes; ) {
      const word = vocabulary[Math.floor(next() ** 2 * vocabulary.length)];
      words.push(word);
      length += word.length + 1;
    }
    return { id: `m${i}`, ts: i * 1000, author: `user${i % 12}`, text: words.join(" ") };
  });
}

/** How long extracting one synthetic segment takes, and the longest hold of the event loop. */
async function stress(extractor: Extractor, count = 500): Promise<{ ms: number; heldMs: number }> {
  const messages = syntheticSegment(count, 10_000);
  const turns = messages.map((m) => ({
    role: "user",
    kind: "user" as const,
    author: m.author,
    text: m.text,
  }));
  let heldMs = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    heldMs = Math.max(heldMs, now - last - 10);
    last = now;
  }, 10);
  const started = performance.now();
  await extractor.extract(turns);
  const ms = performance.now() - started;
  clearInterval(timer);
  heldMs = Math.max(heldMs, performance.now() - last - 10);
  return { ms, heldMs: Math.max(0, heldMs) };
}

// ---------------------------------------------------------------------------------------------
// The run

const USAGE = `
npm run bench:topics [-- options]

Whether the offline extractor names what was discussed: today's extractor beside the new one on
the same segments. The share of stored topics that are a participant's name, a URL fragment, a
stopword or shorter than three characters; topics per segment; the share of topics whose words
are in the text of their evidence messages; time per segment and for the largest one; and the
new extractor on one synthetic segment of 500 messages of 10 KB.

The new extractor runs on contiguous segments (each channel's timeline cut at silences and sizes)
and on linked ones (the reply linker's conversations, the annotated replyTo set aside, each
segmented on its own with the same settings: segment --conversations linked), there also with
each message's inferred parent, as the pipeline gives extraction. On each, its
questions against the annotations: a question is an annotated person's message that the
extractor, given it alone, reports as one; it is answered when a later message of another author
names it in its annotated replyTo.
  answer in segment  the share of the answered questions whose first answer is in the
                     question's segment: all the extractor can see
  reported           the share of the questions it reports in their segment (50 at most each)
  precision, recall  of its "answered" verdict (a question not reported, or called unclear or
  F1                 unanswered, is not answered), and their harmonic mean
  accuracy           the share of questions whose answered / not answered verdict is right
  of reported        the same among the questions it reports (its verdicts, the cap aside)
  right answer       of the questions rightly called answered, the share whose answering
                     messages include an annotated answer

  --input FILE      another chat file (JSON lines); default: the annotated IRC files of
                    ../shared/data/irc/, one channel per file
  --max-size N      the segment ceiling in messages (default ${DEFAULT_MAX_SIZE})
  --show N          print each channel's top N topics, before and after (default 0)
  --stress-before   also time today's extractor on the synthetic segment (minutes)
  --junk            list the new extractor's junk topics (contiguous), with their channel and why
  --json            the numbers as one JSON object
  --help            this text
`;

function parseOptions() {
  const values = benchArgs(USAGE, {
    input: { type: "string" },
    "max-size": { type: "string", default: String(DEFAULT_MAX_SIZE) },
    show: { type: "string", default: "0" },
    "stress-before": { type: "boolean", default: false },
    junk: { type: "boolean", default: false },
    json: { type: "boolean", default: false },
  });
  const maxSize = Number(values["max-size"]);
  const show = Number(values.show);
  if (!Number.isSafeInteger(maxSize) || maxSize < 1) {
    usageError(USAGE, "--max-size must be a positive integer");
  }
  if (!Number.isSafeInteger(show) || show < 0) {
    usageError(USAGE, "--show must be a whole number");
  }
  return { ...values, maxSize, show };
}

const percent = (part: number, whole: number) =>
  whole === 0 ? "–" : `${((100 * part) / whole).toFixed(1)}%`;
const fixed = (n: number, digits = 1) => n.toFixed(digits);

/** The questions table: each extractor whose questions were measured, one row. */
function printVerdicts(results: readonly Measured[]): void {
  const measured = results.filter((r) => r.verdicts !== undefined);
  const first = measured[0]?.verdicts;
  if (first === undefined) return;
  console.log("");
  console.log(
    `Questions: ${first.questions.toLocaleString("en-US")} annotated, ${first.answered.toLocaleString("en-US")} of them answered by another author`,
  );
  const columns = [
    "answer in segment",
    "reported",
    "precision",
    "recall",
    "F1",
    "accuracy",
    "of reported",
    "right answer",
  ];
  const rows = measured.map(({ verdicts: v }) => {
    const { truePositives: tp, falsePositives: fp, falseNegatives: fn } = v as Verdicts;
    const q = v as Verdicts;
    const trueNegatives = q.questions - tp - fp - fn;
    return [
      percent(q.answerInSegment, q.answered),
      percent(q.reported, q.questions),
      percent(tp, tp + fp),
      percent(tp, tp + fn),
      percent(2 * tp, 2 * tp + fp + fn),
      percent(tp + trueNegatives, q.questions),
      percent(q.reportedRight, q.reported),
      percent(q.rightAnswer, tp),
    ];
  });
  const width = (i: number) => Math.max(columns[i].length, ...rows.map((row) => row[i].length)) + 2;
  const nameWidth = Math.max(...measured.map((r) => r.variant.length)) + 2;
  const line = (name: string, cells: string[]) =>
    `${name.padEnd(nameWidth)}${cells.map((cell, i) => cell.padStart(width(i))).join("")}`;
  console.log(line("extractor", columns));
  for (const [i, r] of measured.entries()) console.log(line(r.variant, rows[i]));
  console.log(
    'answer in segment: answered questions whose first annotated answer is in their segment; reported: questions the extractor reports in their segment; precision, recall, F1: of its "answered" verdict (not reported, unclear or unanswered: not answered); accuracy: answered / not answered right, of all questions and of those reported; right answer: of the rightly answered, those whose answering messages include an annotated answer',
  );
}

async function main(): Promise<void> {
  const options = parseOptions();
  const corpus = loadCorpus(options.input);
  const segmented: Record<Segmentation, Channel[]> = {
    contiguous: channelsOf(corpus.messages, options.maxSize, "contiguous"),
    linked: channelsOf(corpus.messages, options.maxSize, "linked"),
  };
  const channels = segmented.contiguous;
  const questions = new Map<string, AnnotatedQuestion[]>();
  for (const channel of channels) {
    const inFileOrder = corpus.messages.filter((m) => m.channel === channel.name);
    questions.set(
      channel.name,
      await annotatedQuestions(
        inFileOrder,
        corpus.annotated,
        (m) => corpus.parents.get(keyOf(m.channel, m.id)) ?? [],
      ),
    );
  }
  const results: Measured[] = [];
  const parents = inferredParents(corpus.messages);
  for (const variant of VARIANTS) {
    results.push(await measure(variant, segmented[variant.segmentation], questions, parents));
  }
  const stressed = {
    after: await stress(new KeyphraseExtractor()),
    // A quarter of the text: linear time makes the full segment about 4 times as long.
    quarter: await stress(new KeyphraseExtractor(), 125),
    before: options["stress-before"]
      ? await stress(new Analyzer(new RetextExtractor(), ANALYZER_DEFAULTS))
      : undefined,
  };
  if (options.json) {
    console.log(
      JSON.stringify(
        {
          corpus: corpus.description,
          channels: channels.length,
          messages: corpus.messages.length,
          results: results.map(({ top: _top, junkTopics: _junk, ...r }) => r),
          stress: stressed,
        },
        null,
        2,
      ),
    );
    return;
  }
  const segments = (segmentation: Segmentation) =>
    segmented[segmentation].reduce((n, c) => n + c.segments.length, 0);
  console.log(
    `Topics on chat: ${corpus.description}, ${channels.length} channels, ${corpus.messages.length.toLocaleString("en-US")} messages, ${segments("contiguous").toLocaleString("en-US")} contiguous segments, ${segments("linked").toLocaleString("en-US")} linked (settle 24h, maxSize ${options.maxSize})`,
  );
  console.log("");
  const columns = [
    "topics",
    "per segment",
    "junk",
    "names",
    "URL",
    "stopword",
    "short",
    "evidence",
    "ms/segment",
    "largest",
  ];
  const rows = results.map((r) => [
    String(r.topics),
    fixed(r.topics / r.segments),
    percent(r.junk.name + r.junk.url + r.junk.stopword + r.junk.short, r.topics),
    percent(r.junk.name, r.topics),
    percent(r.junk.url, r.topics),
    percent(r.junk.stopword, r.topics),
    percent(r.junk.short, r.topics),
    percent(r.evidence, r.topics),
    fixed(r.totalMs / r.segments, 0),
    `${fixed(r.largest.ms, 0)} ms (${r.largest.messages} msgs)`,
  ]);
  const width = (i: number) => Math.max(columns[i].length, ...rows.map((row) => row[i].length)) + 2;
  const nameWidth = Math.max(...results.map((r) => r.variant.length)) + 2;
  const line = (name: string, cells: string[]) =>
    `${name.padEnd(nameWidth)}${cells.map((cell, i) => cell.padStart(width(i))).join("")}`;
  console.log(line("extractor", columns));
  for (const [i, r] of results.entries()) console.log(line(r.variant, rows[i]));
  console.log(
    "junk: a word of the topic is an author or addressed nick of the channel, or a word found only in its URLs; the topic a stopword; or shorter than 3 characters. evidence: every word of the topic in the text of its evidence messages",
  );
  const s = stressed.after;
  console.log(
    `one segment of 500 messages of 10 KB: after ${fixed(s.ms / 1000, 2)} s (${fixed(s.ms / stressed.quarter.ms, 1)}× the time of 125 messages: linear is 4×), the event loop held at most ${fixed(s.heldMs, 0)} ms${stressed.before ? `; before ${fixed(stressed.before.ms / 1000, 1)} s, held at most ${fixed(stressed.before.heldMs / 1000, 1)} s` : ""}`,
  );
  printVerdicts(results);
  if (options.junk) {
    console.log("");
    for (const topic of results[1].junkTopics) console.log(`junk ${topic}`);
  }
  if (options.show > 0) {
    for (const channel of channels) {
      console.log("");
      for (const r of results) {
        const top = (r.top.get(channel.name) ?? []).slice(0, options.show).join(", ");
        console.log(`${channel.name} ${r.variant.split(":")[0]}: ${top || "none"}`);
      }
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
