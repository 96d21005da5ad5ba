/**
 * The offline extractor as it was before the extractor seam (kept for `npm run bench:topics`
 * only, to measure the new one beside it in the same run): a keyphrase extractor (retext-keywords)
 * behind the {@link LLM} seam, reading the analyzer's rendered prompt back (so authors and
 * addressed nicknames are part of the text it reads). Unchanged but for its imports and its
 * reading of the quoted render (prompt version 2); delete it with the benchmark's "before" column.
 */

import {
  type ChatJSONOptions,
  ExtractionError,
  type LLM,
  LLMError,
  normalizeTopic,
  type Turn,
  type UsageListener,
} from "convoseg/extraction";
import {
  EXCERPT_END,
  EXCERPT_START,
  EXISTING_END as EXISTING_TOPICS_END,
  EXISTING_START as EXISTING_TOPICS_START,
} from "convoseg/extraction/prompts";
import { isPositiveInteger } from "convoseg/numbers";
import { toString as nlcstToString } from "nlcst-to-string";
import { retext } from "retext";
import retextEnglish from "retext-english";
import retextKeywords, { type Keyphrase, type Keyword } from "retext-keywords";
import retextPos from "retext-pos";

/** What the extractor is, for logs, usage records and any output that names the model. */
const KEYPHRASE_EXTRACTOR_NAME = "keyphrase-extractor (offline, no LLM)";

const DEFAULT_MAX_CANDIDATES = 8;
const DEFAULT_MIN_SCORE = 0.2;
const MAX_TAGS = 5;
/** The analyzer's own role labels; with those of the excerpt, never a topic. */
const ROLE_LABELS = ["user", "assistant", "tool", "system"];
/**
 * A line of the excerpt, one per turn: `Turn N [ROLE] "author": "text"` (the author absent for a
 * turn without one), author and text as JSON strings. Read back as `author: text`, the text this
 * extractor read before the render quoted them, so that its figures stay comparable.
 */
const TURN_LINE = /^Turn (\d+) \[([^\]]*)\](?: ("(?:[^"\\]|\\.)*"))?: ("(?:[^"\\]|\\.)*")$/;
/** Turns are joined as paragraphs so that no sentence, hence no phrase, spans two turns. */
const TURN_SEPARATOR = "\n\n";

/** The prompt has no excerpt to extract from: not a prompt of the analyzer. */
class MissingExcerptError extends ExtractionError {
  override readonly name: string = "MissingExcerptError";
  constructor(message: string) {
    super("EXTRACTION_OFFLINE_NO_EXCERPT", message);
  }
}

export interface KeyphraseExtractorOptions {
  /** At most this many candidates per reply, the highest confidences; a positive integer. Default 8. */
  maxCandidates?: number;
  /**
   * Phrases whose retext-keywords score (relative to the excerpt's top phrase, which scores 1) is
   * below this are left out; 0 to 1. Default 0.2.
   */
  minScore?: number;
  /** Told of every answered call: zero tokens, model {@link KEYPHRASE_EXTRACTOR_NAME}, latency. */
  onUsage?: UsageListener;
}

/** One candidate as the analyzer reads it off the wire. */
export interface WireCandidate {
  topic: string;
  reason: string;
  confidence: number;
  tags: string[];
  /** 1-based Turn numbers of the excerpt, inclusive. */
  turn_range: [number, number];
  subjective: boolean;
  wiki_worthy: boolean | null;
}

/** A turn of the excerpt as the prompt numbers and labels it. */
interface ExcerptTurn {
  number: number;
  role: string;
  text: string;
}

/** A keyphrase or keyword reduced to what a candidate needs. */
interface Finding {
  score: number;
  stems: string[];
  /** Each occurrence, in document order: its text as written and its offset in the document. */
  occurrences: { surface: string; offset: number }[];
}

/**
 * An {@link LLM} that extracts keyphrases instead of asking a model. `chatJSON` takes the excerpt
 * of the last user message, runs retext-keywords over the text of its turns (every role; the
 * `Turn N [ROLE]:` labels are not part of the text) and answers `{"candidates": [...]}`:
 *
 * - topic: the phrase's most frequent surface form (first seen wins a tie); keywords stand in when
 *   the library finds no phrase;
 * - confidence: the library's score, which it already normalizes to the excerpt's top phrase
 *   (top = 1, others their share of it), rounded to 3 decimals: within 0..1 and monotonic in the
 *   score, but relative to the excerpt, not a calibrated probability;
 * - tags: the phrase's word stems, deduplicated, at most 5; turn_range: the first and last Turn
 *   numbers with an occurrence; reason: where and how often it occurs;
 * - subjective false, wiki_worthy null (no verdict).
 *
 * Topics listed as existing and the role labels are dropped; the rest are ordered by confidence
 * (then first occurrence) and capped at `maxCandidates`. The same prompt always gets the same
 * reply. `options.schema` is not consulted: the reply has the analyzer's shape by construction.
 */
export class KeyphraseExtractor implements LLM {
  readonly name = KEYPHRASE_EXTRACTOR_NAME;
  readonly #maxCandidates: number;
  readonly #minScore: number;
  readonly #onUsage: UsageListener | undefined;
  // Every phrase is requested: `minScore` and `maxCandidates` cut after the drops, so dropped
  // topics do not leave the reply short.
  readonly #processor = retext()
    .use(retextEnglish)
    .use(retextPos)
    .use(retextKeywords, { maximum: Number.POSITIVE_INFINITY })
    .freeze();

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
    this.#onUsage = options.onUsage;
  }

  /**
   * The candidates of the excerpt in the last user message. Rejects with a
   * {@link MissingExcerptError} when there is no excerpt, an {@link LLMError} when `signal` is
   * aborted.
   */
  async chatJSON(
    messages: readonly Turn[],
    options: ChatJSONOptions = {},
  ): Promise<{ candidates: WireCandidate[] }> {
    const started = performance.now();
    throwIfAborted(options.signal);
    const prompt = messages.findLast((message) => message.role === "user")?.content;
    if (prompt === undefined) throw new MissingExcerptError("no user message to extract from");
    const { turns, existing } = readPrompt(prompt);
    const candidates = await this.#extract(turns, existing);
    throwIfAborted(options.signal);
    const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    const call = { model: KEYPHRASE_EXTRACTOR_NAME, latencyMs: performance.now() - started };
    this.#onUsage?.(usage, call);
    options.onUsage?.(usage, call);
    return { candidates };
  }

  async #extract(turns: ExcerptTurn[], existing: Set<string>): Promise<WireCandidate[]> {
    if (turns.every((turn) => turn.text.trim() === "")) return [];
    const starts: number[] = [];
    let offset = 0;
    for (const turn of turns) {
      starts.push(offset);
      offset += turn.text.length + TURN_SEPARATOR.length;
    }
    const file = await this.#processor.process(turns.map((turn) => turn.text).join(TURN_SEPARATOR));
    const phrases = file.data.keyphrases ?? [];
    const findings =
      phrases.length > 0 ? phrases.map(ofPhrase) : (file.data.keywords ?? []).map(ofKeyword);
    const excluded = new Set([
      ...existing,
      ...ROLE_LABELS,
      ...turns.map((turn) => normalizeTopic(turn.role)),
    ]);
    const turnAt = (at: number): number =>
      turns[starts.findLastIndex((start) => start <= at)].number;

    return findings
      .filter((finding) => finding.score >= this.#minScore && finding.occurrences.length > 0)
      .filter(
        (finding) => !finding.occurrences.some((o) => excluded.has(normalizeTopic(o.surface))),
      )
      .sort((a, b) => b.score - a.score || a.occurrences[0].offset - b.occurrences[0].offset)
      .slice(0, this.#maxCandidates)
      .map((finding) => toCandidate(finding, turnAt));
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new LLMError("keyphrase extraction aborted", false, undefined, { cause: signal.reason });
  }
}

/**
 * The turns of the prompt's excerpt and the normalized existing topics. The excerpt runs from the
 * first start marker to the last end marker after it, so a turn quoting a marker stays inside;
 * existing topics are only read outside the excerpt, so a turn cannot fake them.
 */
function readPrompt(prompt: string): { turns: ExcerptTurn[]; existing: Set<string> } {
  const lines = prompt.split(/\r?\n/);
  const start = lines.indexOf(EXCERPT_START);
  const end = lines.lastIndexOf(EXCERPT_END);
  if (start < 0 || end < start) {
    throw new MissingExcerptError(
      `the prompt has no excerpt between "${EXCERPT_START}" and "${EXCERPT_END}"`,
    );
  }
  const turns: ExcerptTurn[] = [];
  for (const line of lines.slice(start + 1, end)) {
    const match = TURN_LINE.exec(line);
    const current = turns.at(-1);
    if (match) {
      const text = JSON.parse(match[4]) as string;
      const author = match[3] === undefined ? undefined : (JSON.parse(match[3]) as string);
      turns.push({
        number: Number(match[1]),
        role: match[2],
        text: author === undefined ? text : `${author}: ${text}`,
      });
    } else if (current) current.text += `\n${line}`;
  }
  const outside = [...lines.slice(0, start), ...lines.slice(end + 1)];
  const from = outside.indexOf(EXISTING_TOPICS_START);
  const to = outside.indexOf(EXISTING_TOPICS_END, from + 1);
  const existing = from < 0 || to < 0 ? [] : outside.slice(from + 1, to);
  return { turns, existing: new Set(existing.map(normalizeTopic).filter((topic) => topic !== "")) };
}

function ofPhrase(phrase: Keyphrase): Finding {
  return {
    score: phrase.score,
    stems: phrase.stems,
    occurrences: inOrder(
      phrase.matches.flatMap((match) => occurrence(nlcstToString(match.nodes), match.nodes[0])),
    ),
  };
}

function ofKeyword(keyword: Keyword): Finding {
  return {
    score: keyword.score,
    stems: [keyword.stem],
    occurrences: inOrder(
      keyword.matches.flatMap((match) => occurrence(nlcstToString(match.node), match.node)),
    ),
  };
}

/** The occurrence starting at `node`, or none when the parser gave it no position. */
function occurrence(
  surface: string,
  node: { position?: { start: { offset?: number } } } | undefined,
): { surface: string; offset: number }[] {
  const offset = node?.position?.start.offset;
  return offset === undefined ? [] : [{ surface: surface.replace(/\s+/g, " ").trim(), offset }];
}

function inOrder<T extends { offset: number }>(occurrences: T[]): T[] {
  return occurrences.sort((a, b) => a.offset - b.offset);
}

function toCandidate(finding: Finding, turnAt: (offset: number) => number): WireCandidate {
  const counts = new Map<string, number>();
  for (const { surface } of finding.occurrences) {
    counts.set(surface, (counts.get(surface) ?? 0) + 1);
  }
  // Map order is insertion order, hence document order: the earliest form wins a tie.
  let topic = "";
  let best = 0;
  for (const [surface, count] of counts) {
    if (count > best) [topic, best] = [surface, count];
  }
  const numbers = finding.occurrences.map((o) => turnAt(o.offset));
  const first = Math.min(...numbers);
  const last = Math.max(...numbers);
  const times = finding.occurrences.length;
  const where = first === last ? `turn ${first}` : `turns ${first}–${last}`;
  return {
    topic,
    reason: `mentioned in ${where} (${times === 1 ? "once" : `${times} times`})`,
    confidence: Math.round(finding.score * 1000) / 1000,
    tags: [...new Set(finding.stems)].slice(0, MAX_TAGS),
    turn_range: [first, last],
    subjective: false,
    wiki_worthy: null,
  };
}
