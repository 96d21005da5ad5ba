/**
 * The offline extractor: the topics of a segment without a model, from its structured turns.
 * It names subjects (noun phrases and technical terms), never people, URLs, numbers, stopwords or
 * system lines, and weighs each by how distinctive it is for the segment against the channel's
 * other segments (TF-IDF over the channel's term statistics). It is not a model and says so:
 * results name it {@link KEYPHRASE_EXTRACTOR_NAME}.
 */
import { createHash } from "node:crypto";
import { isPositiveInteger } from "../../../base/numbers/index.js";
import { normalizeTopic } from "../candidates.js";
import { LLMError } from "../errors.js";
import type {
  Extraction,
  ExtractionTurn,
  ExtractOptions,
  Extractor,
  TermCounts,
} from "../extractor.js";
import type { Candidate, Trimmed } from "../types.js";
import { NO_CALLS } from "../usage.js";
import { participants } from "./names.js";
import { offlineQuestions } from "./questions.js";
import { botsOf, type Form, formsOf, type Tally, tally, voicesOf } from "./tally.js";
import type { Context } from "./tokens.js";
import { stem } from "./words.js";

/** What the extractor is, for logs, usage records and any output that names the model. */
export const KEYPHRASE_EXTRACTOR_NAME = "keyphrase-extractor (offline, no LLM)";

/**
 * The version its results are keyed by (as an analyzer's prompt version): a change to what it
 * proposes bumps it, so that the next delivery of a segment extracts it again.
 */
export const KEYPHRASE_EXTRACTOR_VERSION = "keyphrases-4";

/**
 * How it makes terms (tokens, keys, phrases): the channel's term statistics are kept under this
 * name, and a change to the terms bumps it, which starts them anew.
 */
export const KEYPHRASE_VOCABULARY = "offline-2";

export interface KeyphraseExtractorOptions {
  /** At most this many candidates per segment, the highest scores; a positive integer. Default 10. */
  maxCandidates?: number;
  /** Candidates scoring below this share of the segment's best are left out; 0 to 1. Default 0.2. */
  minScore?: number;
}

const DEFAULT_MAX_CANDIDATES = 10;
const DEFAULT_MIN_SCORE = 0.2;
/** Terms of a segment scored and counted in the channel's statistics: its most frequent ones. */
const MAX_POOL = 200;
/** Names of a segment recorded in the channel's statistics. */
const MAX_NAMES = 64;
/** Segments with fewer turns than this may have topics said once. */
const SMALL_SEGMENT = 10;
/** Score weights: a phrase names a subject more precisely than one of its words. */
const LENGTH_WEIGHT = [0, 1, 1.6, 1.9];
const TECHNICAL_WEIGHT = 1.2;
/**
 * A word said by one author only in a segment of several, or only by bots: an announcement or a
 * monologue more than a subject of the conversation.
 */
const ONE_VOICE_WEIGHT = 0.5;
/** A single plain word ending in -ing, -ed or -ly is more often a verb or an adverb than a subject. */
const VERB_FORM_WEIGHT = 0.6;
const VERB_FORM = /(?:ing|ed|ly)$/u;
/** The prefix of a name's key in the statistics: `@nick` never collides with a term. */
const NAME_PREFIX = "@";

/** A term with its score. */
interface Scored extends Tally {
  score: number;
}

const NO_STATISTICS: TermCounts = { segments: 0, frequencies: new Map() };

/**
 * The topics of a segment's turns, without a model. Reads the text of every turn but system
 * lines; refuses author names and addressed nicknames (of the segment, and those the channel's
 * statistics know), URLs and anything inside them, tokens of one or two characters, numbers,
 * stopwords and general words; merges inflections; proposes single words, technical terms and
 * phrases of up to three words said in at least two messages (one in a segment of fewer than ten
 * turns), scored by `(1 + ln messages) × idf × length × technical × spread` where
 * `idf = ln((N + 1) / (df + 1)) + 1` over the channel's N other counted segments. Each
 * candidate's turn range runs from the first to the last turn whose text says it. Linear in the
 * text, yielding to the event loop as it reads; its answer to the same turns is stored (in
 * `options.outputs`) so that a retry gives the same candidates whatever was counted meanwhile.
 */
export class KeyphraseExtractor implements Extractor {
  readonly name = KEYPHRASE_EXTRACTOR_NAME;
  readonly #maxCandidates: number;
  readonly #minScore: number;

  /** Throws a RangeError naming an option that is out of range. */
  constructor(options: KeyphraseExtractorOptions = {}) {
    const maxCandidates = options.maxCandidates ?? DEFAULT_MAX_CANDIDATES;
    if (!isPositiveInteger(maxCandidates)) {
      throw new RangeError(`maxCandidates must be a positive integer, got ${maxCandidates}`);
    }
    const minScore = options.minScore ?? DEFAULT_MIN_SCORE;
    if (!(minScore >= 0 && minScore <= 1)) {
      throw new RangeError(`minScore must be between 0 and 1, got ${minScore}`);
    }
    this.#maxCandidates = maxCandidates;
    this.#minScore = minScore;
  }

  /** Rejects with an {@link LLMError} (not retryable) when `options.signal` is aborted. */
  async extract(
    turns: readonly ExtractionTurn[],
    options: ExtractOptions = {},
  ): Promise<Extraction> {
    throwIfAborted(options.signal);
    const readable = turns.filter((turn) => turn.kind !== "system");
    const people = participants(readable);
    const context: Context = { names: people.names, general: channelWords(options.channel) };
    const tallies = await tally(turns, context, botsOf(readable), options.signal);
    const voices = new Set(readable.map((turn) => turn.author ?? "")).size;
    const minMessages = readable.length < SMALL_SEGMENT ? 1 : 2;
    const pool = [...tallies.values()]
      .filter((t) => t.messages >= (t.words > 1 ? 2 : minMessages))
      .sort(
        (a, b) => b.messages - a.messages || b.occurrences - a.occurrences || order(a.key, b.key),
      )
      .slice(0, MAX_POOL);
    const terms = {
      vocabulary: KEYPHRASE_VOCABULARY,
      terms: [
        ...pool.map((t) => t.key),
        ...[...people.channelNames].slice(0, MAX_NAMES).map((name) => NAME_PREFIX + name),
      ],
    };
    // Questions depend on the turns alone: the same on every attempt, never stored.
    const trimmed: Trimmed = {};
    const questions = offlineQuestions(turns, trimmed);
    const answer = (candidates: Candidate[]): Extraction =>
      Object.keys(trimmed).length === 0
        ? { candidates, questions, terms }
        : { candidates, questions, terms, trimmed };
    const key = answerKey(turns);
    const stored = await options.outputs?.get(key);
    if (stored !== undefined) return answer(stored.candidates);
    const names = new Set(pool.flatMap(wordsOf).map((word) => NAME_PREFIX + word));
    const statistics =
      options.statistics === undefined
        ? NO_STATISTICS
        : await options.statistics.lookup(KEYPHRASE_VOCABULARY, [
            ...pool.map((t) => t.key),
            ...names,
          ]);
    throwIfAborted(options.signal);
    const candidates = this.#choose(pool, statistics, voices);
    await options.outputs?.put(key, { candidates, usage: { ...NO_CALLS } });
    return answer(candidates);
  }

  /** The best-scoring terms, none a channel's name, none inside another chosen one. */
  #choose(pool: readonly Tally[], statistics: TermCounts, voices: number): Candidate[] {
    const { segments, frequencies } = statistics;
    const scored: Scored[] = pool
      .filter((t) => !wordsOf(t).some((word) => frequencies.has(NAME_PREFIX + word)))
      .map((t) => {
        const idf = Math.log((segments + 1) / ((frequencies.get(t.key) ?? 0) + 1)) + 1;
        const spread = 0.7 + (0.3 * Math.min(voicesOf(t), 3)) / 3;
        const oneVoice = !t.person || (voicesOf(t) <= 1 && voices >= 3);
        const verbForm =
          t.words === 1 && !t.technical && wordsOf(t).every((word) => VERB_FORM.test(word));
        const weight =
          LENGTH_WEIGHT[t.words] *
          (t.technical ? TECHNICAL_WEIGHT : 1) *
          spread *
          (oneVoice ? ONE_VOICE_WEIGHT : 1) *
          (verbForm ? VERB_FORM_WEIGHT : 1);
        return { ...t, score: (1 + Math.log(t.messages)) * idf * weight };
      })
      .sort((a, b) => b.score - a.score || b.messages - a.messages || order(a.key, b.key));
    const top = scored[0]?.score ?? 0;
    const chosen: Scored[] = [];
    const candidates: Candidate[] = [];
    // Two terms may show as one topic: "fixres" (a word, stemmed) and "FixRes" (a name, kept).
    const shown = new Set<string>();
    for (const term of scored) {
      if (chosen.length >= this.#maxCandidates || term.score < this.#minScore * top) break;
      if (chosen.some((other) => nested(term.key, other.key))) continue;
      const made = candidate(term, top);
      const key = normalizeTopic(made.topic);
      if (shown.has(key)) continue;
      shown.add(key);
      chosen.push(term);
      candidates.push(made);
    }
    return candidates;
  }
}

/** The words of a channel's name, as written and stemmed: general in that channel. */
function channelWords(channel: string | undefined): Set<string> {
  const words = (channel ?? "").toLowerCase().match(/\p{L}{3,}/gu) ?? [];
  return new Set([...words, ...words.map(stem)]);
}

/** The lower-case words of a term's forms as written: what names are compared with. */
function wordsOf(term: Tally): string[] {
  return [...formsOf(term).keys()].flatMap((surface) => surface.toLowerCase().split(" "));
}

/**
 * Whether one key's words run inside the other's, or two phrases of the same length are one
 * run of words shifted by one ("exciting new linux", "new linux distribution").
 */
function nested(a: string, b: string): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  if (` ${long} `.includes(` ${short} `)) return true;
  const x = a.split(" ");
  const y = b.split(" ");
  if (x.length !== y.length || x.length < 2) return false;
  const shifted = (p: string[], q: string[]) => p.slice(1).join(" ") === q.slice(0, -1).join(" ");
  return shifted(x, y) || shifted(y, x);
}

/**
 * The candidate of a term: shown in its most frequent form (the earliest wins a tie), with the
 * turns from the first to the last that write it so, so that its evidence holds its very words.
 */
function candidate(term: Scored, top: number): Candidate {
  let topic = "";
  let shown: Form = { times: 0, first: term.first, last: term.last };
  // Map order is first-seen order: the earliest form wins a tie.
  for (const [surface, form] of formsOf(term)) {
    if (form.times > shown.times) [topic, shown] = [surface, form];
  }
  const where =
    shown.first === shown.last
      ? `turn ${shown.first + 1}`
      : `turns ${shown.first + 1}–${shown.last + 1}`;
  const messages = term.messages === 1 ? "1 message" : `${term.messages} messages`;
  return {
    topic,
    reason: `mentioned in ${messages} (${where})`,
    confidence: Math.round((term.score / top) * 1000) / 1000,
    tags: [...new Set(topic.toLowerCase().split(" "))],
    turnRange: [shown.first, shown.last],
    subjective: false,
  };
}

/** What the stored answer to these turns is found by: the version and a digest of the turns. */
function answerKey(turns: readonly ExtractionTurn[]): string {
  const hash = createHash("sha256");
  for (const turn of turns) {
    hash.update(JSON.stringify([turn.role, turn.kind, turn.author ?? null, turn.text]));
    hash.update("\n");
  }
  return `${KEYPHRASE_EXTRACTOR_VERSION} ${hash.digest("hex")}`;
}

function order(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new LLMError("keyphrase extraction aborted", false, undefined, { cause: signal.reason });
  }
}
