/**
 * The offline extractor's one pass over a segment's text: every term (word, technical term,
 * phrase of up to three words) with the turns it occurs in, who said it and how it was written.
 */

import { LLMError } from "../errors.js";
import type { ExtractionTurn } from "../extractor.js";
import { type Context, type Piece, pieces, type Word } from "./tokens.js";

/** Characters read between two yields to the event loop. */
const YIELD_EVERY = 32_768;
/** Distinct terms held while counting: past it, terms seen in one message only are dropped. */
const MAX_TALLIES = 60_000;
/** Words in a phrase, at most. */
const MAX_PHRASE_WORDS = 3;
/**
 * A term of the segment and where it occurs. Most terms occur once: the first author and form are
 * kept as they are, and the sets only made for a term said again.
 */
export interface Tally {
  key: string;
  words: number;
  /** Turns it occurs in (each counted once), and how often in all. */
  messages: number;
  occurrences: number;
  /** Indexes of the first and last turn it occurs in. */
  first: number;
  last: number;
  author: string;
  authors?: Set<string>;
  /** Whether a person (not a bot) said it. */
  person: boolean;
  /**
   * Its first form as written; then every form (at most four) with how often each and the first
   * and last turn that says it.
   */
  surface: string;
  surfaces?: Map<string, Form>;
  technical: boolean;
}

/** One way a term is written: how often, and the first and last turn that writes it so. */
export interface Form {
  times: number;
  first: number;
  last: number;
}

/**
 * Every term of the turns (but system lines) with where it occurs: each run of words between
 * breaks gives its words and its phrases of two and three words.
 */
export async function tally(
  turns: readonly ExtractionTurn[],
  context: Context,
  bots: ReadonlySet<string>,
  signal: AbortSignal | undefined,
): Promise<Map<string, Tally>> {
  const tallies = new Map<string, Tally>();
  let limit = MAX_TALLIES;
  let read = 0;
  for (const [index, turn] of turns.entries()) {
    if (turn.kind === "system") continue;
    const author = turn.author?.toLowerCase() ?? "";
    const person = turn.kind !== "bot" && !bots.has(author);
    const run: Word[] = [];
    const flush = () => {
      for (let start = 0; start < run.length; start++) {
        for (let n = 1; n <= MAX_PHRASE_WORDS && start + n <= run.length; n++) {
          count(tallies, run, start, n, index, author, person);
        }
      }
      run.length = 0;
    };
    const text = person ? turn.text : withoutAttribution(turn.text);
    for (const piece of pieces(text, context) as Piece[]) {
      if (piece === undefined) flush();
      else run.push(piece);
    }
    flush();
    if (tallies.size > limit) {
      forgetSingles(tallies, index);
      // What stays is said in several messages; pruning again only pays once it has doubled.
      limit = Math.max(MAX_TALLIES, 2 * tallies.size);
    }
    read += turn.text.length;
    if (read >= YIELD_EVERY) {
      read = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
      throwIfAborted(signal);
    }
  }
  return tallies;
}

/** Counts the term of `n` words of `run` from `start`, said in turn `index`. */
function count(
  tallies: Map<string, Tally>,
  run: readonly Word[],
  start: number,
  n: number,
  index: number,
  author: string,
  person: boolean,
): void {
  const first = run[start];
  const end = start + n;
  let technical = first.technical;
  if (n > 1) {
    // A phrase that repeats a word ("test test") says nothing its word does not; a general word
    // names a subject only after a word that is not ("fresh install", not "get work-items"),
    // never beside another ("panic problem last"), and alone never; a run of device names or
    // versions (`sdb3 sdb2 sdb1`) is output pasted.
    if (!first.opens) return;
    let digits = 0;
    let general = true;
    for (let i = start; i < end; i++) {
      const word = run[i];
      if (word.digits) digits++;
      if (i > start && word.general && run[i - 1].general) return;
      general &&= word.general;
      technical ||= word.technical;
      for (let j = start; j < i; j++) if (run[j].key === word.key) return;
    }
    if (digits > 1 || general) return;
  } else if (first.general) {
    return;
  }
  let key = first.key;
  let surface = first.surface;
  for (let i = start + 1; i < end; i++) {
    key += ` ${run[i].key}`;
    surface += ` ${run[i].surface}`;
  }
  const entry = tallies.get(key);
  if (entry === undefined) {
    tallies.set(key, {
      key,
      words: n,
      messages: 1,
      occurrences: 1,
      first: index,
      last: index,
      author,
      person,
      surface,
      technical,
    });
    return;
  }
  entry.occurrences++;
  if (entry.last !== index) {
    entry.messages++;
    entry.last = index;
  }
  entry.person ||= person;
  if (author !== entry.author && author !== "") {
    entry.authors ??= new Set(entry.author === "" ? [] : [entry.author]);
    if (entry.authors.size < 4) entry.authors.add(author);
  }
  entry.surfaces ??= new Map([
    [entry.surface, { times: 1, first: entry.first, last: entry.first }],
  ]);
  const seen = entry.surfaces.get(surface);
  if (seen !== undefined) {
    seen.times++;
    seen.last = index;
  } else if (entry.surfaces.size < 4) {
    entry.surfaces.set(surface, { times: 1, first: index, last: index });
  }
}

/** How many people said a term. */
export function voicesOf(term: Tally): number {
  return term.authors?.size ?? (term.author === "" ? 0 : 1);
}

/** A term's forms as written, in first-seen order. */
export function formsOf(term: Tally): Map<string, Form> {
  return (
    term.surfaces ?? new Map([[term.surface, { times: 1, first: term.first, last: term.last }]])
  );
}

/** An author with this many messages in a segment or more, nearly all with a URL, is a bot. */
const BOT_MESSAGES = 2;
const BOT_URL_SHARE = 0.8;
const HAS_URL = /[a-z][a-z0-9+.-]{0,15}:\/\/\S/iu;

/**
 * The authors (lower case) that post like bots: at least two messages, four in five with a
 * URL (bug trackers and code review announcing changes), besides those of kind `bot`.
 */
export function botsOf(turns: readonly ExtractionTurn[]): Set<string> {
  const posts = new Map<string, { messages: number; links: number }>();
  for (const turn of turns) {
    const author = turn.author?.toLowerCase() ?? "";
    if (author === "") continue;
    const seen = posts.get(author) ?? { messages: 0, links: 0 };
    seen.messages++;
    if (HAS_URL.test(turn.text)) seen.links++;
    posts.set(author, seen);
  }
  const bots = new Set<string>();
  for (const [author, { messages, links }] of posts) {
    if (messages >= BOT_MESSAGES && links >= BOT_URL_SHARE * messages) bots.add(author);
  }
  return bots;
}

/** A trailing `(who did it)`, and `Label: who;` opening a line: the people a bot credits. */
const TRAILING_CREDIT = /\((?:[^()]|\([^()]{0,60}\)){1,80}\)\s*$/u;
const LEADING_CREDIT = /^([\p{L}\p{N} ]{1,30}:\s+)[^;:"()[\]]{1,40};/u;

/** A bot's line without the people it credits, who are never what was discussed. */
function withoutAttribution(text: string): string {
  return text.replace(TRAILING_CREDIT, " ").replace(LEADING_CREDIT, "$1 ;");
}

/** Bounds memory on huge segments: terms said in one earlier message only are forgotten. */
function forgetSingles(tallies: Map<string, Tally>, index: number): void {
  for (const [key, entry] of tallies) {
    if (entry.messages === 1 && entry.last < index) tallies.delete(key);
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new LLMError("keyphrase extraction aborted", false, undefined, { cause: signal.reason });
  }
}
