/**
 * The search benchmark's corpus and labelled set. Every IRC file of a folder becomes a channel's
 * messages; each file's people's lines are linked into conversations by the reply linker and cut
 * by the segmenter's defaults, as `run` does, giving the conversation documents. The labelled set
 * is every annotated question (a person's line with a question mark) that another person answered
 * by the corpus's own reply annotation: its words are the query, its answers what a hit must hold.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { linkAll, settledConversations } from "convoseg/linker";
import type { ChatMessage } from "convoseg/messages";
import type { SearchResultSource } from "convoseg/search";
import { ConversationSegmenter } from "convoseg/segmenter";

interface Row {
  id: number;
  ts: string;
  user?: string | null;
  text?: string;
  system?: boolean;
  replyTo?: number[];
}

export interface Corpus {
  messages: ChatMessage[];
  /** Each conversation segment, as the documents read a stored result. */
  results: SearchResultSource[];
  /** Each labelled question. */
  questions: LabelledQuestion[];
}

export interface LabelledQuestion {
  channel: string;
  id: string;
  /** The question's words, its leading `nick:` address left out: what a person would type. */
  query: string;
  /** The ids of the messages annotated as answering it, by someone other than the asker. */
  answers: Set<string>;
}

/** The corpus's bots (ubottu, ubotu, …) are named so; IRC has no bot flag. */
const BOT = /bot$/i;
/** A leading address (`nick: `, `nick, `), which a person searching would not type. */
const ADDRESS = /^\S{1,30}[:,]\s+/;
const segmenter = new ConversationSegmenter();

/** Reads `names` (files of `dir`), each its own channel, named by the file. */
export function readCorpus(dir: string, names: readonly string[]): Corpus {
  const corpus: Corpus = { messages: [], results: [], questions: [] };
  for (const name of names) {
    const channel = name.replace(/\.jsonl$/, "").replace(/[^A-Za-z0-9_-]/g, "-");
    const rows: Row[] = readFileSync(join(dir, name), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as Row);
    const people = rows.filter((row) => row.system !== true);
    const messages: ChatMessage[] = people.map((row) => ({
      id: String(row.id),
      ts: Date.parse(row.ts),
      channel,
      user: row.user ?? "",
      text: row.text ?? "",
    }));
    // One at a time: a spread of the 179k-line stream overflows the call stack.
    for (const message of messages) corpus.messages.push(message);
    for (const result of conversationResults(channel, messages)) corpus.results.push(result);
    for (const question of labelled(channel, people)) corpus.questions.push(question);
  }
  return corpus;
}

/** The channel's conversation segments: linked conversations, each cut by the segmenter. */
function conversationResults(channel: string, messages: ChatMessage[]): SearchResultSource[] {
  const decisions = linkAll(
    messages.map((m) => ({
      id: m.id,
      ts: m.ts,
      author: m.user ?? "",
      text: m.text ?? "",
      kind: BOT.test(m.user ?? "") ? ("bot" as const) : ("user" as const),
    })),
  );
  const conversations = settledConversations(decisions);
  const streams = new Map<string, ChatMessage[]>();
  messages.forEach((message, i) => {
    const key = conversations[i] ?? message.id;
    const stream = streams.get(key);
    if (stream) stream.push(message);
    else streams.set(key, [message]);
  });
  const results: SearchResultSource[] = [];
  for (const stream of streams.values()) {
    for (const segment of segmenter.closedSegments(stream, Number.MAX_SAFE_INTEGER, (m) => m.ts)) {
      const first = segment[0] as ChatMessage;
      results.push({
        channel,
        segmentId: `${first.id}-${segment.length}`,
        first: { id: first.id, ts: first.ts },
        last: { id: (segment.at(-1) as ChatMessage).id, ts: (segment.at(-1) as ChatMessage).ts },
        messageIds: segment.map((m) => m.id),
        candidates: [],
      });
    }
  }
  return results;
}

/** The file's annotated questions (ids from 1000: the lines the corpus annotates) answered by another person. */
function labelled(channel: string, people: readonly Row[]): LabelledQuestion[] {
  const byId = new Map(people.map((row) => [row.id, row]));
  const answers = new Map<number, Set<string>>();
  for (const row of people) {
    for (const parent of row.replyTo ?? []) {
      const asked = byId.get(parent);
      if (asked === undefined || asked.user === row.user || parent === row.id) continue;
      const set = answers.get(parent) ?? new Set<string>();
      set.add(String(row.id));
      answers.set(parent, set);
    }
  }
  const questions: LabelledQuestion[] = [];
  for (const row of people) {
    const answered = answers.get(row.id);
    const text = (row.text ?? "").replace(ADDRESS, "").trim();
    if (row.id < 1000 || answered === undefined || !text.includes("?")) continue;
    if (text.replace(/[^\p{L}]+/gu, "").length < 8) continue; // "?" or "ok?": nothing to search for
    questions.push({ channel, id: String(row.id), query: text.slice(0, 500), answers: answered });
  }
  return questions;
}
