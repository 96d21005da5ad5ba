/**
 * A result held to what the results table can store: every candidate's fields within the
 * extraction bounds (whatever extractor made them), and the item within DynamoDB's 400 KB limit.
 * An oversized result degrades rather than failing on every retry until it ends in the DLQ: it
 * first leaves out the list of the segment's message ids (`first`, `last` and `count` still bound
 * the segment), then drops questions, the last asked first, then candidates, the least confident
 * first. Each cut is counted in `trimmed`, by what was cut.
 */
import { itemSize, MAX_ITEM_BYTES, valueSize } from "../../base/dynamodb/index.js";
import { KnowledgeItemError } from "../errors.js";
import { addTrimmed, boundCandidate } from "../extraction/bounds/index.js";
import type { Candidate, Trimmed } from "../extraction/index.js";
import { type ResultTrimmed, resultItemKey, type SegmentResult } from "../store/schema/items.js";
import { RESULTS_SORT_KEY } from "../store/schema/table.js";

/** Room for the `oversizeCandidates` count the drops add to the item. */
const COUNT_ALLOWANCE = 64;

/** The candidates within the field bounds, and what bounding them cut, added to `trimmed`. */
export function boundedCandidates<C extends Candidate>(
  candidates: readonly C[],
  trimmed: Trimmed,
): C[] {
  return candidates.map((candidate) => boundCandidate(candidate, trimmed));
}

/** The size DynamoDB counts for the result's item, keys included (the partition key is `channel`). */
export function resultItemSize(result: SegmentResult): number {
  return itemSize({ ...result, [RESULTS_SORT_KEY]: resultItemKey(result.segmentId) });
}

/**
 * `result` as it fits in `limit` bytes (default DynamoDB's item limit), `trimmed` set to what was
 * cut (absent when nothing): without its message ids if it must, then without as many of its
 * last asked questions, then of the least confident candidates, as it must. A result that fits without any candidate or id is not
 * stored at all: a {@link KnowledgeItemError} (its other fields are bounded, so this means a
 * bound is missing).
 */
export function fitResult(
  result: SegmentResult,
  cut: ResultTrimmed,
  limit = MAX_ITEM_BYTES,
): SegmentResult {
  const trimmed: ResultTrimmed = {};
  addTrimmed(trimmed, cut);
  const withCuts = (r: SegmentResult): SegmentResult => {
    const { trimmed: _old, ...rest } = r;
    return Object.keys(trimmed).length === 0 ? rest : { ...rest, trimmed: { ...trimmed } };
  };
  let fitted = withCuts(result);
  if (resultItemSize(fitted) <= limit) return fitted;
  if (fitted.messageIds !== undefined) {
    addTrimmed(trimmed, { messageIds: fitted.messageIds.length });
    const { messageIds: _ids, ...rest } = fitted;
    fitted = withCuts(rest);
    if (resultItemSize(fitted) <= limit) return fitted;
  }
  const questions = fitted.questions ?? [];
  if (questions.length > 0) {
    // The last asked go first. Each question's share is counted once: linear in the size.
    let size = resultItemSize(fitted) + COUNT_ALLOWANCE;
    for (let kept = questions.length - 1; kept >= 0; kept--) {
      size -= 1 + valueSize(questions[kept]);
      if (size > limit) continue;
      const next: SegmentResult = {
        ...fitted,
        questions: questions.slice(0, kept),
        trimmed: { ...trimmed, oversizeQuestions: questions.length - kept },
      };
      if (resultItemSize(next) <= limit) return next;
    }
    addTrimmed(trimmed, { oversizeQuestions: questions.length });
    fitted = withCuts({ ...fitted, questions: [] });
  }
  // The least confident go first; the kept ones keep their order. Each candidate's share of the
  // item is counted once, so that dropping many stays linear in the result's size.
  const order = fitted.candidates
    .map((candidate, index) => ({ index, size: 1 + valueSize(candidate), candidate }))
    .sort((a, b) => a.candidate.confidence - b.candidate.confidence || b.index - a.index);
  let size = resultItemSize(fitted) + COUNT_ALLOWANCE;
  const dropped = new Set<number>();
  for (const { index, size: share } of order) {
    dropped.add(index);
    size -= share;
    if (size > limit) continue;
    const next: SegmentResult = {
      ...fitted,
      candidates: fitted.candidates.filter((_, i) => !dropped.has(i)),
      trimmed: { ...trimmed, oversizeCandidates: dropped.size },
    };
    if (resultItemSize(next) <= limit) return next;
  }
  throw new KnowledgeItemError(
    `${result.channel}/${resultItemKey(result.segmentId)}`,
    `over DynamoDB's ${limit}-byte item limit even without message ids, questions and candidates`,
  );
}
