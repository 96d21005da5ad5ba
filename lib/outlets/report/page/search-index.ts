/**
 * The report's search: the documents `searchDocuments` (lib/outlets/search) makes — a message, a
 * conversation (segment), a topic, a question — made here from the data the page already embeds,
 * and a MiniSearch index of them built in the browser. Nothing is added to the file: a 180k-message
 * report would otherwise carry its words twice. Documents are numbers (their index in typed
 * columns) and their words are read from the report's data when the index asks for them. No DOM:
 * unit tests run it in Node.
 */
import MiniSearch, { type SearchResult } from "minisearch";
// Types only from the search barrel, which brings Node's modules with its values.
import type { SearchKind } from "../../search/index.js";
import { type Snippet, snippet } from "../../search/snippet/index.js";
import type { ChannelData, ReportData, ReportTexts } from "../data.js";

const KINDS = [
  "message",
  "conversation",
  "topic",
  "question",
] as const satisfies readonly SearchKind[];
const [MESSAGE, CONVERSATION, TOPIC, QUESTION] = [0, 1, 2, 3];

/** How much a kind's match weighs against a message's: what was learned reads before chatter. */
const KIND_BOOST = [1, 1.2, 2, 1.5];
/** The most characters of a conversation's words, as `searchDocuments` takes (its `MAX_SEGMENT_TEXT`). */
export const MAX_SEGMENT_TEXT = 8_000;
/** The longest query taken, in characters. */
const MAX_QUERY = 200;
/** Characters of a hit's snippet. */
const SNIPPET = 160;
/** The words the index and the snippet's marks both count: letters and digits. */
const WORD = /[\p{L}\p{N}]+/gu;
/**
 * Words too common to find anything by, left out of the index and of queries (an eighth of the
 * index's memory on the IRC stream): `how do I mount ntfs` looks for `mount ntfs`.
 */
const STOP_WORDS = new Set(
  [
    "a an and are as at be but by do does for from had has have i if in is it its me my no not of",
    "on or so that the then there this to was we were what with you your",
  ]
    .join(" ")
    .split(" "),
);

/** A question of the report's knowledge, its channel and segment resolved to indexes. */
interface Question {
  channel: number;
  segment: number;
  question: string;
  answer: string;
  ts: number;
  status: string;
}

export interface ReportHit {
  kind: SearchKind;
  /** The channel's index in the report's channels. */
  channel: number;
  ts: number;
  /** The segment's index in the channel's segments; -1 for a message in no segment. */
  segment: number;
  /** A message's channel position; a topic's index in the channel's topics; else -1. */
  item: number;
  /** A message's author, a question's status; "" otherwise. */
  detail: string;
  /** A topic's or question's own words, a conversation's topics; "" for a message. */
  title: string;
  snippet: Snippet;
}

export interface ReportSearchResult {
  /** Every document that matched (the hits are the best of them). */
  total: number;
  /** No document has every word: these have some of them. */
  partial: boolean;
  hits: ReportHit[];
}

export class ReportSearch {
  /** A document's kind (index into {@link KINDS}), channel, segment, item and time. */
  private readonly kind: Uint8Array;
  private readonly channelOf: Int32Array;
  private readonly segmentOf: Int32Array;
  private readonly itemOf: Int32Array;
  private readonly tsOf: Float64Array;
  private readonly questions: Question[];
  /** A channel's messages' epoch ms and each segment's positions, unpacked when first needed. */
  private readonly unpacked = new Map<number, { times: Float64Array; members: number[][] }>();
  /** Per channel, per segment: the questions asked in it. */
  private readonly asked = new Map<string, string[]>();
  private readonly index: MiniSearch<number>;
  /** Documents added to the index so far (they are added in order). */
  private added = 0;

  constructor(
    private readonly data: ReportData,
    private readonly texts: ReportTexts,
  ) {
    this.questions = resolveQuestions(data);
    for (const q of this.questions) {
      const key = `${q.channel}/${q.segment}`;
      this.asked.set(key, [...(this.asked.get(key) ?? []), q.question]);
    }
    const rows: [number, number, number, number, number][] = [];
    data.channels.forEach((channel, c) => {
      const columns = channel.messages;
      if (columns === null) return;
      const { times } = this.unpack(c);
      const channelTexts = texts[c] ?? [];
      for (let p = 0; p < times.length; p++) {
        if (columns.kind?.[p] === 2 || (channelTexts[p] ?? "").trim() === "") continue;
        rows.push([MESSAGE, c, Math.max(-1, columns.segment[p]), p, times[p]]);
      }
    });
    data.channels.forEach((channel, c) => {
      channel.segments.forEach((segment, s) => {
        rows.push([CONVERSATION, c, s, -1, segment.first]);
      });
      channel.topics.forEach((topic, t) => {
        rows.push([TOPIC, c, topic.supports[0]?.[0] ?? -1, t, topic.last]);
      });
    });
    this.questions.forEach((q, i) => {
      rows.push([QUESTION, q.channel, q.segment, i, q.ts]);
    });
    const n = rows.length;
    this.kind = new Uint8Array(n);
    this.channelOf = new Int32Array(n);
    this.segmentOf = new Int32Array(n);
    this.itemOf = new Int32Array(n);
    this.tsOf = new Float64Array(n);
    rows.forEach(([kind, c, s, item, ts], i) => {
      this.kind[i] = kind;
      this.channelOf[i] = c;
      this.segmentOf[i] = s;
      this.itemOf[i] = item;
      this.tsOf[i] = ts;
    });
    this.index = new MiniSearch<number>({
      fields: ["title", "text"],
      // A document is its number: its fields are read from the report's data when indexed.
      // A message has no title: none is read, counted or tokenized (most documents are messages).
      extractField: (doc, field) =>
        field === "id"
          ? doc
          : field === "text"
            ? this.text(doc)
            : this.kind[doc] === MESSAGE
              ? undefined
              : this.title(doc),
      tokenize: (text) => text.match(WORD) ?? [],
      processTerm: (term) => {
        const word = term.toLowerCase();
        return STOP_WORDS.has(word) ? null : word;
      },
    });
  }

  /** How many documents there are. */
  get size(): number {
    return this.kind.length;
  }

  /** How many documents are in the index. */
  get indexed(): number {
    return this.added;
  }

  /** Whether every document is in the index. */
  get ready(): boolean {
    return this.added === this.size;
  }

  /** Indexes the documents not yet indexed, at most `upTo` of them more. */
  indexSome(upTo = Number.POSITIVE_INFINITY): void {
    const end = Math.min(this.size, this.added + upTo);
    for (let i = this.added; i < end; i++) this.index.add(i);
    this.added = end;
  }

  /**
   * The best `limit` hits of `query`: every word, the last also as the start of a word (it may
   * still be being typed), words of five letters and more also one letter off. When no document
   * has every word, those with some of them.
   */
  search(query: string, limit = 20): ReportSearchResult {
    const text = query.slice(0, MAX_QUERY);
    if ((text.match(WORD) ?? []).length === 0) return { total: 0, partial: false, hits: [] };
    const options = {
      boost: { title: 2 },
      prefix: (term: string, i: number, terms: string[]) =>
        term.length >= 3 || (i === terms.length - 1 && term.length >= 2),
      fuzzy: (term: string) => (term.length >= 5 ? 0.2 : false),
      boostDocument: (id: number) => KIND_BOOST[this.kind[id]],
    };
    let results = this.index.search(text, { ...options, combineWith: "AND" });
    let partial = false;
    if (results.length === 0) {
      results = this.index.search(text, { ...options, combineWith: "OR" });
      partial = results.length > 0;
    }
    return {
      total: results.length,
      partial,
      hits: results.slice(0, limit).map((result) => this.hit(result)),
    };
  }

  private hit(result: SearchResult): ReportHit {
    const doc = Number(result.id);
    const kind = this.kind[doc];
    const item = this.itemOf[doc];
    const channel = this.data.channels[this.channelOf[doc]];
    const columns = channel.messages;
    const user = kind === MESSAGE && columns ? columns.user[item] : -1;
    return {
      kind: KINDS[kind],
      channel: this.channelOf[doc],
      ts: this.tsOf[doc],
      segment: this.segmentOf[doc],
      item: kind === MESSAGE || kind === TOPIC ? item : -1,
      detail:
        kind === QUESTION
          ? this.questions[item].status
          : user >= 0 && columns
            ? columns.users[user]
            : "",
      title: this.title(doc),
      // The document's own words around the first word it matched (as the index matched them);
      // its parts (a topic's wordings and reason, a conversation's messages) told apart.
      snippet: snippet(
        kind === MESSAGE ? this.text(doc) : this.text(doc).replaceAll("\n", " · "),
        result.terms.join(" "),
        SNIPPET,
      ),
    };
  }

  /** A topic's or question's own words, a conversation's first five topics and questions. */
  private title(doc: number): string {
    const channel = this.data.channels[this.channelOf[doc]];
    const item = this.itemOf[doc];
    switch (this.kind[doc]) {
      case CONVERSATION:
        return this.learned(this.channelOf[doc], this.segmentOf[doc]).slice(0, 5).join("; ");
      case TOPIC:
        return channel.topics[item].topic;
      case QUESTION:
        return this.questions[item].question;
      default:
        return "";
    }
  }

  /** What a query's words are matched against, as `searchDocuments` makes it. */
  private text(doc: number): string {
    const c = this.channelOf[doc];
    const channel = this.data.channels[c];
    const item = this.itemOf[doc];
    switch (this.kind[doc]) {
      case MESSAGE:
        return this.texts[c]?.[item] ?? "";
      case CONVERSATION:
        return this.conversationText(c, this.segmentOf[doc]);
      case TOPIC: {
        const topic = channel.topics[item];
        return [topic.topic, ...topic.aliases, bestReason(channel, item)].join("\n");
      }
      default: {
        const { question, answer } = this.questions[item];
        return [question, answer].join("\n").trim();
      }
    }
  }

  /** A segment's extracted topics and its questions. */
  private learned(c: number, s: number): string[] {
    const topics = this.data.channels[c].segments[s]?.extraction?.topics ?? [];
    return [...topics.map((t) => t.topic), ...(this.asked.get(`${c}/${s}`) ?? [])];
  }

  /** What was learned from a segment, then its messages' words, at most `MAX_SEGMENT_TEXT`. */
  private conversationText(c: number, s: number): string {
    const words: string[] = [];
    if (this.data.channels[c].messages !== null) {
      let length = 0;
      for (const p of this.unpack(c).members[s] ?? []) {
        const text = this.texts[c]?.[p] ?? "";
        if (text === "" || length > MAX_SEGMENT_TEXT) continue;
        words.push(text);
        length += text.length + 1;
      }
    }
    return [...this.learned(c, s), ...words].join("\n").slice(0, MAX_SEGMENT_TEXT);
  }

  private unpack(c: number): { times: Float64Array; members: number[][] } {
    const known = this.unpacked.get(c);
    if (known !== undefined) return known;
    const channel = this.data.channels[c];
    const columns = channel.messages;
    const n = columns?.tsDelta.length ?? 0;
    const times = new Float64Array(n);
    const members: number[][] = channel.segments.map(() => []);
    let ts = 0;
    for (let p = 0; p < n; p++) {
      ts += columns?.tsDelta[p] ?? 0;
      times[p] = ts;
      const s = columns?.segment[p] ?? -1;
      if (s >= 0) members[s]?.push(p);
    }
    const unpacked = { times, members };
    this.unpacked.set(c, unpacked);
    return unpacked;
  }
}

/** The reason of a topic's most confident support (what `Topic.bestReason` is). */
function bestReason(channel: ChannelData, t: number): string {
  const topic = channel.topics[t];
  let best: { reason: string; confidence: number } | undefined;
  for (const [s, i] of topic.supports) {
    const found = channel.segments[s]?.extraction?.topics[i];
    if (found && (best === undefined || found.confidence > best.confidence)) best = found;
  }
  return best?.reason ?? "";
}

/** The questions the report lists (unanswered, unclear, answered) whose segment it has. */
function resolveQuestions(data: ReportData): Question[] {
  const lists = data.knowledge?.questions;
  if (lists === undefined) return [];
  const channels = new Map(data.channels.map((c, i) => [c.name, i]));
  const segments = data.channels.map((c) => new Map(c.segments.map((s, i) => [s.id, i])));
  return [...lists.unanswered, ...lists.unclear, ...lists.answered].flatMap((q) => {
    const c = channels.get(q.channel);
    const s = c === undefined ? undefined : segments[c].get(q.segmentId);
    if (c === undefined || s === undefined) return [];
    return [
      {
        channel: c,
        segment: s,
        question: q.question,
        answer: q.answer ?? "",
        ts: q.askedTs,
        status: q.status,
      },
    ];
  });
}
