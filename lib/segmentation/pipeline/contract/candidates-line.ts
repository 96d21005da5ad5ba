/**
 * A line of `run --candidates`: one extracted segment's topic candidates and what extracting it
 * cost (docs/contracts/candidates-line.md). `run` writes every field; the report reads them back
 * and needs neither `late` nor a candidate's `id`, which hand-written lines may leave out.
 */
export interface CandidatesLine {
  channel: string;
  segmentId: string;
  /** Whether the segment was delivered late (written by `run`; readers may do without). */
  late?: boolean;
  model: string;
  promptVersion: string;
  candidates: readonly {
    /** The candidate's id in the results table (written by `run`; readers may do without). */
    id?: string;
    topic: string;
    reason: string;
    confidence: number;
    tags: readonly string[];
    subjective: boolean;
    /** Absent when not judged. */
    wikiWorthy?: boolean;
    /** The first and last message of the evidence, or null without a range. */
    messageIds: readonly [string, string] | null;
    /** Distinct authors of the evidence, and the first 20 of them; absent without a range. */
    authorCount?: number;
    authors?: readonly string[];
  }[];
  /** Every model call that got an answer, and its tokens, over all the segment's attempts. */
  usage: {
    calls: number;
    inputTokens: number;
    outputTokens: number;
    cacheReadTokens: number;
    cacheWriteTokens: number;
  };
}
