/**
 * A page of a channel's questions with people's corrections laid over the index: an entry a
 * correction moves to another status (or hides) leaves its status's pages, and shows in the
 * pages of the status it was given, in the order the index would keep it there.
 */
import type { QuestionStatus } from "../extraction/index.js";
import { correctedStatus, type QuestionCorrection } from "../store/correction-item.js";
import { applyCorrection, correctionOf } from "../store/corrections.js";
import type { ResultStore } from "../store/port.js";
import {
  type Question,
  questionEntriesOf,
  questionItemKey,
  questionOf,
  questionPrefix,
} from "../store/question-entry.js";
import type { QuestionEntry } from "../store/schema/items.js";

type Keyed = { key: string; question: Question };

type PageStore = Pick<ResultStore, "listQuestions" | "listCorrections" | "getResult">;

const byKey = (a: Keyed, b: Keyed) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/**
 * At most `limit` questions of `status` (all without) after the key `after`, corrected; `next`
 * the key of the last when more may follow. Reads the index page after page until `limit` kept
 * (a corrected-away entry is skipped), and the results of the corrections moved into the range.
 */
export async function correctedPage(
  store: PageStore,
  channel: string,
  corrections: readonly QuestionCorrection[],
  options: { status?: QuestionStatus; limit: number; after?: string },
): Promise<{ items: Question[]; next: string | null; readUnits?: number }> {
  const { status, limit, after } = options;
  const prefix = questionPrefix(status);
  const kept: Keyed[] = [];
  let readUnits: number | undefined;
  let cursor = after;
  let more = true;
  while (more && kept.length < limit) {
    const page = await store.listQuestions(channel, {
      ...(status !== undefined && { status }),
      limit,
      ...(cursor !== undefined && { after: cursor }),
    });
    if (page.readUnits !== undefined) readUnits = (readUnits ?? 0) + page.readUnits;
    for (const entry of page.entries) {
      const corrected = correctedEntry(entry, corrections);
      // Moved to another status (or hidden): its own status's pages show it there.
      if (corrected !== undefined && corrected.status === entry.status) {
        kept.push({ key: questionItemKey(entry), question: corrected });
      }
    }
    cursor = page.next ?? undefined;
    more = page.next !== null;
  }
  const movedIn = await movedInto(store, channel, corrections, prefix, after, limit);
  const merged = [...kept, ...movedIn.found].sort(byKey);
  const items = merged.slice(0, limit);
  const last = items.at(-1)?.key;
  const next = (more || movedIn.more || merged.length > limit) && last !== undefined ? last : null;
  return {
    items: items.map((k) => k.question),
    next,
    ...(readUnits !== undefined && { readUnits }),
  };
}

function correctedEntry(
  entry: QuestionEntry,
  corrections: readonly QuestionCorrection[],
): Question | undefined {
  return applyCorrection(questionOf(entry), correctionOf(corrections, entry));
}

/**
 * The first `limit` questions a correction gives a status under `prefix` other than the model's,
 * keyed where the index would keep them, after `after`: each read from its result (a question
 * since removed, or of the status already, is not one).
 */
async function movedInto(
  store: PageStore,
  channel: string,
  corrections: readonly QuestionCorrection[],
  prefix: string,
  after: string | undefined,
  limit: number,
): Promise<{ found: Keyed[]; more: boolean }> {
  const candidates = corrections
    .flatMap((c) => {
      const status = correctedStatus(c.action);
      if (status === undefined) return [];
      const key = questionItemKey({ ...c, id: c.questionId, status });
      return key.startsWith(prefix) && (after === undefined || key > after) ? [{ c, key }] : [];
    })
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const found: Keyed[] = [];
  let i = 0;
  for (; i < candidates.length && found.length < limit; i++) {
    const { c } = candidates[i];
    const result = await store.getResult(channel, c.segmentId);
    const entries = result === undefined ? [] : questionEntriesOf(result);
    for (const entry of entries) {
      if (correctionOf(corrections, entry) !== c) continue;
      const corrected = correctedEntry(entry, corrections);
      if (corrected === undefined || corrected.status === entry.status) continue;
      const key = questionItemKey({ ...entry, status: corrected.status });
      if (key.startsWith(prefix) && (after === undefined || key > after)) {
        found.push({ key, question: corrected });
      }
    }
  }
  return { found, more: i < candidates.length };
}
