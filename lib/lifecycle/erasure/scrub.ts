/**
 * What a redaction of the person's deleted messages leaves of their name in results: a result
 * too large to list its messages keeps the author lists of candidates it could not recount, and
 * a model may have written the name into a topic, reason or tag. The results whose time span
 * holds one of the person's messages are read, and each such candidate loses the name from its
 * authors, or, when its own words name the person, is removed with its topic entry; a question
 * the person asked, or whose words name them, is removed. Once per channel and run, every result
 * of the channel is read for candidates and questions that name them: others may have said the
 * name often enough for an extractor to make it a topic of a segment without the person.
 */
import { mentions } from "../../history/changes/index.js";
import { normalizeTopic } from "../../knowledge/extraction/index.js";
import type { ResultStore, SegmentResult } from "../../knowledge/store/index.js";
import { ErasureError } from "./errors.js";

/** The results store's reads and writes the erasure of names needs. */
export type ScrubStore = Pick<
  ResultStore,
  | "findSpans"
  | "listResults"
  | "getResult"
  | "saveRedaction"
  | "deleteWindows"
  | "removeTerms"
  | "listCorrections"
  | "saveCorrection"
>;

export interface ScrubCounts {
  results: number;
  candidatesRemoved: number;
  /** Questions the person asked, or whose words name them. */
  questionsRemoved: number;
  topicEntriesDeleted: number;
  windowsDeleted: number;
  authorsRemoved: number;
}

const NONE: Readonly<ScrubCounts> = Object.freeze({
  results: 0,
  candidatesRemoved: 0,
  questionsRemoved: 0,
  topicEntriesDeleted: 0,
  windowsDeleted: 0,
  authorsRemoved: 0,
});

const MAX_TRIES = 5;

/**
 * Removes `names` (a person's display names) from the results that hold any of `times` in
 * `channel`; without `times`, the candidates and questions whose own words name them from every
 * result of the channel (others may have said the name often enough for an extractor to make it
 * a topic), never an author list there: the person wrote in none of those, so a name there is a
 * namesake's. Idempotent.
 */
export async function scrubResults(
  store: ScrubStore,
  channel: string,
  names: readonly string[],
  times?: readonly number[],
): Promise<ScrubCounts> {
  const total: ScrubCounts = { ...NONE };
  if (names.length === 0) return total;
  const segments =
    times === undefined
      ? (await store.listResults(channel))
          .filter((result) => scrubPlan(result, names, true) !== undefined)
          .map((result) => result.segmentId)
      : (await store.findSpans(channel, times)).map((span) => span.segmentId);
  for (const segmentId of new Set(segments)) {
    const counts = await scrubResult(store, channel, segmentId, names, times === undefined);
    for (const key of Object.keys(total) as (keyof ScrubCounts)[]) total[key] += counts[key];
  }
  return total;
}

async function scrubResult(
  store: ScrubStore,
  channel: string,
  segmentId: string,
  names: readonly string[],
  wordsOnly: boolean,
): Promise<ScrubCounts> {
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    const result = await store.getResult(channel, segmentId);
    if (result === undefined) break;
    const plan = scrubPlan(result, names, wordsOnly);
    if (plan === undefined) break;
    // The cached replies may hold the name too; the result is written last, as in a redaction.
    const windows = result.windows ?? [];
    await store.deleteWindows(channel, windows);
    const saved = await store.saveRedaction(result, {
      next: plan.next,
      supports: [],
      removedTopics: plan.removedTopics,
      windows,
    });
    if (!saved) continue;
    return {
      results: 1,
      candidatesRemoved: plan.removedTopics.length,
      questionsRemoved: plan.questionsRemoved,
      topicEntriesDeleted: plan.removedTopics.length,
      windowsDeleted: windows.length,
      authorsRemoved: plan.authorsRemoved,
    };
  }
  const result = await store.getResult(channel, segmentId);
  if (result !== undefined && scrubPlan(result, names, wordsOnly) !== undefined) {
    throw new ErasureError(
      "ERASURE_RESULT_CONFLICT",
      `segment ${segmentId}: its result kept changing during ${MAX_TRIES} tries to remove a name from it; run the erasure again`,
    );
  }
  return { ...NONE };
}

/**
 * The result without `names` (with `wordsOnly`, only where its candidates' and questions' own
 * words hold them, not its author lists), or undefined when it holds none of them. Pure.
 */
export function scrubPlan(
  result: SegmentResult,
  names: readonly string[],
  wordsOnly = false,
):
  | {
      next: SegmentResult;
      removedTopics: string[];
      authorsRemoved: number;
      questionsRemoved: number;
    }
  | undefined {
  const removedTopics: string[] = [];
  let authorsRemoved = 0;
  const candidates = [];
  for (const candidate of result.candidates) {
    const words = [candidate.topic, candidate.reason, ...candidate.tags];
    if (words.some((text) => names.some((name) => mentions(text, name)))) {
      removedTopics.push(normalizeTopic(candidate.topic));
      continue;
    }
    if (!wordsOnly && candidate.authors?.some((a) => names.includes(a))) {
      authorsRemoved++;
      const authors = candidate.authors.filter((a) => !names.includes(a));
      const gone = candidate.authors.length - authors.length;
      candidates.push({
        ...candidate,
        authors,
        authorCount: Math.max(authors.length, (candidate.authorCount ?? gone) - gone),
      });
      continue;
    }
    candidates.push(candidate);
  }
  const named = (text: string | undefined) =>
    text !== undefined && names.some((name) => mentions(text, name));
  const questions = result.questions?.filter(
    (q) =>
      !(!wordsOnly && q.askedBy !== undefined && names.includes(q.askedBy)) &&
      !named(q.question) &&
      !named(q.answer),
  );
  const questionsRemoved = (result.questions?.length ?? 0) - (questions?.length ?? 0);
  if (removedTopics.length === 0 && authorsRemoved === 0 && questionsRemoved === 0) {
    return undefined;
  }
  const next: SegmentResult = {
    ...result,
    candidates,
    ...(questions === undefined ? {} : { questions }),
    windows: [],
    redactions: (result.redactions ?? 0) + 1,
  };
  return { next, removedTopics, authorsRemoved, questionsRemoved };
}
