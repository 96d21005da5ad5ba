/**
 * What search finds: a document per message, per conversation segment (its messages and what was
 * learned from it), per topic and per question, each with its channel, its time, the message ids
 * that are its evidence and where to open it. Built from what the stores hold, nothing else.
 */
import { type ChatMessage, messagePermalink } from "../../history/messages/index.js";
import type { Topic } from "../../knowledge/read/index.js";
import type { SegmentResult } from "../../knowledge/store/index.js";

export const SEARCH_KINDS = ["message", "conversation", "topic", "question"] as const;
export type SearchKind = (typeof SEARCH_KINDS)[number];

/** One searchable document; empty strings where a field does not apply (a flat table's rows). */
export interface SearchDocument {
  /** Unique within the index: the kind, the channel and the thing's own id. */
  id: string;
  kind: SearchKind;
  channel: string;
  /** Epoch ms: a message's time, a segment's first message, a topic's latest evidence, a question's asking. */
  ts: number;
  /** The author's name (a message's, a question's asker); "" when none. */
  author: string;
  /** The author's platform id; "" when none. */
  authorId: string;
  /** A topic's or question's own words; "" for messages and segments. */
  title: string;
  /** What the words of a query are matched against. */
  text: string;
  /** A question's status (answered, unanswered, unclear); "" for the other kinds. */
  status: string;
  /** The segment it is in or comes from; "" when none (a message not yet in a segment). */
  segment: string;
  /** The message ids that are its evidence, in order. */
  evidence: string[];
  /**
   * The platform's own link to it (of a conversation, question or topic, to its first evidence
   * message), where the platform has one and the data names it; else "".
   */
  permalink: string;
}

/** One hit: its document (evidence as ids), its score, and its snippet with the matches marked. */
export interface SearchHit extends Omit<SearchDocument, "text"> {
  score: number;
  snippet: string;
  /** `[start, end)` of each match in `snippet`, in order. */
  marks: [number, number][];
}

/** The most message ids a document names as evidence: a long segment's first ones. */
const MAX_EVIDENCE = 50;
/** The most characters of a segment's words a document holds: enough to find it by. */
export const MAX_SEGMENT_TEXT = 8_000;

/** What a conversation's document reads of its stored result. */
export type SearchResultSource = Pick<
  SegmentResult,
  "channel" | "segmentId" | "first" | "last" | "messageIds" | "candidates" | "questions"
>;

export interface SearchSource {
  messages: readonly ChatMessage[];
  results: readonly SearchResultSource[];
  topics: readonly { channel: string; topic: Topic }[];
}

/** Every document of `source`, messages first, in input order. */
export function searchDocuments(source: SearchSource): SearchDocument[] {
  const segmentOf = new Map<string, string>();
  const byId = new Map<string, ChatMessage>();
  for (const result of source.results) {
    for (const id of result.messageIds ?? [])
      segmentOf.set(`${result.channel}\u0000${id}`, result.segmentId);
  }
  const documents: SearchDocument[] = [];
  for (const message of source.messages) {
    if (message.kind === "system") continue;
    byId.set(`${message.channel}\u0000${message.id}`, message);
    const text = message.text ?? "";
    if (text.trim() === "") continue;
    documents.push({
      id: `message:${message.channel}:${message.id}`,
      kind: "message",
      channel: message.channel,
      ts: message.ts,
      author: message.user ?? "",
      authorId: message.userId ?? "",
      title: "",
      text,
      status: "",
      segment: segmentOf.get(`${message.channel}\u0000${message.id}`) ?? "",
      evidence: [message.id],
      permalink: messagePermalink(message),
    });
  }
  const linkOf = (channel: string, id: string | undefined): string => {
    const message = id === undefined ? undefined : byId.get(`${channel}\u0000${id}`);
    return message === undefined ? "" : messagePermalink(message);
  };
  for (const result of source.results) {
    const ids = result.messageIds ?? [result.first.id, result.last.id];
    const words: string[] = [];
    let length = 0;
    for (const id of ids) {
      const text = byId.get(`${result.channel}\u0000${id}`)?.text ?? "";
      if (text === "" || length > MAX_SEGMENT_TEXT) continue;
      words.push(text);
      length += text.length + 1;
    }
    const learned = [
      ...result.candidates.map((c) => c.topic),
      ...(result.questions ?? []).map((q) => q.question),
    ];
    documents.push({
      id: `conversation:${result.channel}:${result.segmentId}`,
      kind: "conversation",
      channel: result.channel,
      ts: result.first.ts,
      author: "",
      authorId: "",
      title: learned.slice(0, 5).join("; "),
      text: [...learned, ...words].join("\n").slice(0, MAX_SEGMENT_TEXT),
      status: "",
      segment: result.segmentId,
      evidence: ids.slice(0, MAX_EVIDENCE),
      permalink: linkOf(result.channel, ids[0]),
    });
    for (const question of result.questions ?? []) {
      documents.push({
        id: `question:${result.channel}:${question.id}`,
        kind: "question",
        channel: result.channel,
        ts: question.askedTs,
        author: question.askedBy ?? "",
        authorId: "",
        title: question.question,
        text: [question.question, question.answer ?? ""].join("\n").trim(),
        status: question.status,
        segment: result.segmentId,
        evidence: [question.askedId, ...question.answerIds].slice(0, MAX_EVIDENCE),
        permalink: linkOf(result.channel, question.askedId),
      });
    }
  }
  for (const { channel, topic } of source.topics) {
    const evidence = [
      ...new Set(topic.evidence.flatMap((e) => (e.messageIds === null ? [] : e.messageIds))),
    ];
    documents.push({
      id: `topic:${channel}:${topic.normalizedTopic}`,
      kind: "topic",
      channel,
      ts: topic.lastSeen,
      author: "",
      authorId: "",
      title: topic.topic,
      text: [topic.topic, ...topic.aliases, topic.bestReason].join("\n"),
      status: "",
      segment: topic.evidence[0]?.segmentId ?? "",
      evidence: evidence.slice(0, MAX_EVIDENCE),
      permalink: linkOf(channel, evidence[0]),
    });
  }
  return documents;
}
