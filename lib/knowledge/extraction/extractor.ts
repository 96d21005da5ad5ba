/**
 * The extractor's own seam: what any extractor of a segment's topics is given (structured turns,
 * never a rendered prompt) and answers. The LLM-backed `Analyzer` and the offline
 * `KeyphraseExtractor` both implement it; `lib/knowledge`'s `SegmentExtractor` uses it.
 */
import type { AnalyzeOptions, Candidate, QuestionCandidate, Trimmed } from "./types.js";

/** What kind of chat message a turn is (as `lib/history` keeps it): a person's, a bot's, or a system line. */
type TurnKind = "user" | "bot" | "system";

/** One message of a segment, as an extractor reads it. */
export interface ExtractionTurn {
  /**
   * The transcript role: every chat message is a `user` turn; an imported agent transcript keeps
   * its own (`assistant`, `tool`, …).
   */
  role: string;
  kind: TurnKind;
  /** Who wrote it, when the platform says. */
  author?: string;
  text: string;
  /** The message's platform id, when it has one: what another turn's `replyTo` names. */
  id?: string;
  /**
   * The id of the message this one answers (its `replyTo`, else the root of the thread it is a
   * reply in); the LLM render shows it as the answered turn's number.
   */
  replyTo?: string;
}

/**
 * How many of the channel's other segments there are and in how many of them each asked term
 * occurs (the segment being extracted never counts itself).
 */
export interface TermCounts {
  segments: number;
  /** Per asked term that occurs in any; a term not in the map occurs in none. */
  frequencies: ReadonlyMap<string, number>;
}

/**
 * The channel's term statistics, as far as they have been counted: what an extractor that weighs
 * terms by how distinctive they are for the segment reads. `vocabulary` names the extractor's way
 * of making terms: statistics of another vocabulary are not mixed in.
 */
export interface TermStatistics {
  lookup(vocabulary: string, terms: readonly string[]): Promise<TermCounts>;
}

/** What a segment adds to its channel's term statistics, to be counted once per segment. */
export interface SegmentTerms {
  vocabulary: string;
  /** Distinct terms, in no particular order. */
  terms: string[];
}

export interface ExtractOptions extends AnalyzeOptions {
  /** The channel's term statistics (default: none, as for a channel's first segment). */
  statistics?: TermStatistics;
  /**
   * The channel (or conversation) the segment belongs to: in `#rust`, "rust" says nothing of
   * what a segment is about.
   */
  channel?: string;
}

/** An extractor's answer: the candidates, and the terms the segment adds to the statistics. */
export interface Extraction {
  candidates: Candidate[];
  /** The segment's questions, turn indexes into `turns` (absent: the extractor asks none). */
  questions?: QuestionCandidate[];
  /** Absent for an extractor that keeps no statistics (the LLM-backed analyzer). */
  terms?: SegmentTerms;
  /** What the bounds cut on the way (turn texts, fields, candidates); absent when nothing. */
  trimmed?: Trimmed;
}

/**
 * Extracts candidate topics from a segment's turns. Candidates' turn ranges are indexes into
 * `turns`. Any failure rejects: a failure never reads as "no candidates".
 */
export interface Extractor {
  extract(turns: readonly ExtractionTurn[], options?: ExtractOptions): Promise<Extraction>;
}
