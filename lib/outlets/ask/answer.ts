/**
 * The answer to a question asked in a channel: the best few hits of the search, questions with
 * their answers first, then conversations, then the rest, each with where it opens and when it
 * was. Only what the search found: nothing is made up, and "nothing found" says so.
 */
import type { SearchHit } from "../search/index.js";
import { type LinkPlace, messageLink } from "./links.js";

/** How many hits an answer lists by default, and at most. */
export const ASK_HITS = 3;
const MAX_ASK_HITS = 10;

/** One listed hit: its words (chat text, escaped by each renderer), its link and its time. */
export interface AskItem {
  kind: "question" | "conversation" | "message" | "topic";
  /** A question's words, a conversation's topics, a message's snippet: chat text. */
  title: string;
  /** A question's answer as the search shows it (its snippet after the question): chat text. */
  answer?: string;
  /** The platform's link to its first evidence; "" when there is none. */
  link: string;
  /** Epoch ms. */
  ts: number;
}

/** One sentence of a model's short answer and the 1-based numbers of the items it cites. */
export interface SummarySentence {
  text: string;
  hits: number[];
}

export interface AskAnswer {
  /** The search words, as they were looked for. */
  words: string;
  items: AskItem[];
  /**
   * A model's short answer from `items` alone, each sentence citing items by their 1-based
   * number (`./summary.ts`); absent unless one is configured and wrote a valid one.
   */
  summary?: SummarySentence[];
}

/** How a hit ranks in an answer: an answered question first, a bare message last. */
function rank(hit: SearchHit): number {
  if (hit.kind === "question") return hit.status === "answered" ? 0 : 2;
  if (hit.kind === "conversation") return 1;
  if (hit.kind === "topic") return 3;
  return 4;
}

/**
 * A question's answer: its document's words are the question and then its answer, and the
 * snippet shows them on one line; what follows the question's words is the answer's start.
 */
function answerOf(hit: SearchHit): string | undefined {
  const flat = hit.title.replace(/\s+/g, " ").trim();
  const at = flat === "" ? -1 : hit.snippet.indexOf(flat);
  const rest = at < 0 ? "" : hit.snippet.slice(at + flat.length).trim();
  return rest === "" || rest === "…" ? undefined : rest;
}

/**
 * The answer from `hits` (best first, as the search ranks them): at most `limit`, by
 * {@link rank} and then the search's order. A question links to its asking message, a
 * conversation to its first message, a message to itself.
 */
export function composeAnswer(
  words: string,
  hits: readonly SearchHit[],
  place: LinkPlace,
  limit: number = ASK_HITS,
): AskAnswer {
  const wanted = Math.max(1, Math.min(MAX_ASK_HITS, Math.trunc(limit)));
  const order = hits.map((hit, at) => ({ hit, at }));
  order.sort((a, b) => rank(a.hit) - rank(b.hit) || a.at - b.at);
  const items: AskItem[] = [];
  const seen = new Set<string>();
  for (const { hit } of order) {
    if (items.length >= wanted) break;
    // A question and its conversation cite the same asking message: list it once.
    const first = hit.evidence[0];
    const key = first === undefined ? hit.id : `${hit.channel}\u0000${first}`;
    if (seen.has(key) && hit.kind !== "question") continue;
    seen.add(key);
    // The stored message's own link first; the request's place where it lacks its guild or name.
    const link =
      hit.permalink !== "" || first === undefined
        ? hit.permalink
        : messageLink(place, hit.channel, first);
    const title = hit.kind === "message" || hit.title === "" ? hit.snippet : hit.title;
    const item: AskItem = { kind: hit.kind, title, link, ts: hit.ts };
    const answer = hit.kind === "question" ? answerOf(hit) : undefined;
    if (answer !== undefined) item.answer = answer;
    items.push(item);
  }
  return { words, items };
}
