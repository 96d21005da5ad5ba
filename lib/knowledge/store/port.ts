import type {
  QuestionStatus,
  SegmentTerms,
  TermCounts,
  WindowOutput,
} from "../extraction/index.js";
import type { QuestionCorrection } from "./correction-item.js";
import type { RedactionPlan } from "./redaction-plan.js";
import type {
  QuestionEntry,
  SegmentResult,
  SegmentSpan,
  SegmentUsage,
  TopicSupport,
} from "./schema/items.js";

/** An extraction's hold on its segment, and what earlier failed attempts spent. */
export interface Lease {
  owner: string;
  until: number;
  spent: SegmentUsage;
  /** The window replies the segment's attempts stored (their hashes), for its result to list. */
  windows: string[];
}

/** A page of a channel's question index entries. */
export interface QuestionPage {
  entries: QuestionEntry[];
  /** The sort key of the last entry when more may follow (the next page's `after`), else null. */
  next: string | null;
  /** The read units the page consumed, where the store reports them (DynamoDB does). */
  readUnits?: number;
}

/**
 * Where extraction keeps its results, leases, window replies, the topic index and the channel's
 * term statistics: the narrow seam the extraction logic needs (`DynamoDbResultStore` implements
 * it, `MemoryResultStore` is its double).
 */
export interface ResultStore {
  getResult(channel: string, segmentId: string): Promise<SegmentResult | undefined>;
  /** Takes the segment's lease, or throws a {@link SegmentBusyError} while another holds it. */
  acquireLease(
    channel: string,
    segmentId: string,
    lease: { owner: string; now: number; leaseMs: number; expiresAt: number },
  ): Promise<Lease>;
  /** Gives the lease up after a failed attempt, keeping what its unsaved calls spent. */
  releaseLease(
    channel: string,
    segmentId: string,
    owner: string,
    spent: SegmentUsage,
  ): Promise<void>;
  getWindow(channel: string, hash: string): Promise<WindowOutput | undefined>;
  /** Stores a window's reply; with `segmentId`, on the segment's lease first (so it is found). */
  putWindow(
    channel: string,
    hash: string,
    output: WindowOutput,
    expiresAt: number,
    segmentId?: string,
  ): Promise<void>;
  /**
   * Writes the result's topic index entries, its question index entries (from
   * `result.questions`) and span, removes the entries of `previous` it no longer has, widens the channel's span widths, then writes the result and ends the lease in
   * one transaction (a {@link LeaseLostError} when the lease is no longer `owner`'s).
   */
  saveResult(
    result: SegmentResult,
    supports: readonly TopicSupport[],
    previous: SegmentResult | undefined,
    owner: string,
  ): Promise<void>;
  /** The spans (on time and late) that hold any of `times` (epoch ms), strongly consistent. */
  findSpans(channel: string, times: readonly number[]): Promise<SegmentSpan[]>;
  deleteWindows(channel: string, hashes: readonly string[]): Promise<void>;
  /**
   * A redaction's writes against `previous`: topic entries (each only while still that
   * extraction's), question entries (from `previous.questions` to `plan.next`'s, while the
   * result is still `previous`), then the result if nothing else wrote it since. False when
   * something did.
   */
  saveRedaction(previous: SegmentResult, plan: RedactionPlan): Promise<boolean>;
  /** The channel's results, in segment id order. */
  listResults(channel: string): Promise<SegmentResult[]>;
  /** The channel's topic index entries, grouped by topic. */
  listSupports(channel: string): Promise<TopicSupport[]>;
  /**
   * At most `limit` of the channel's question entries of `status` (every status, in status
   * order, without), oldest asked first, after the sort key `after`: one Query.
   */
  listQuestions(
    channel: string,
    options: { status?: QuestionStatus; limit: number; after?: string },
  ): Promise<QuestionPage>;
  /** The channel's question corrections (people make them: few), strongly consistent. */
  listCorrections(channel: string): Promise<QuestionCorrection[]>;
  /**
   * Writes `next` as its question's correction: without `previous`, whatever is stored (a
   * person's latest word wins); with it, only while the stored one is still `previous` (false
   * when not). `next` undefined deletes `previous`.
   */
  saveCorrection(
    next: QuestionCorrection | undefined,
    previous?: QuestionCorrection,
  ): Promise<boolean>;
  /**
   * The channel's term statistics of `vocabulary` for `terms`: how many segments were counted
   * and in how many of them each term occurs, what `segmentId` itself counted left out.
   */
  termCounts(
    channel: string,
    vocabulary: string,
    terms: readonly string[],
    segmentId: string,
  ): Promise<TermCounts>;
  /**
   * Counts the segment's terms into the channel's statistics exactly once: terms the segment
   * counted before (an earlier attempt, a re-extraction) are not counted again.
   */
  countTerms(channel: string, segmentId: string, terms: SegmentTerms): Promise<void>;
  /**
   * Takes everything `segmentId` counted out of the channel's statistics (every vocabulary), as
   * if it had never been counted: what a change to one of its messages does to its words.
   * Resolves to how many vocabularies held it (0 when none, or once withdrawn).
   */
  withdrawTerms(channel: string, segmentId: string): Promise<number>;
  /**
   * Removes every term `matches` picks from the channel's statistics and from the logs of the
   * segments that counted it (a person's name, when they are erased). Resolves to how many terms.
   */
  removeTerms(channel: string, matches: (term: string) => boolean): Promise<number>;
}
