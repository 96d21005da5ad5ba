/**
 * Corrections following what happens to people and messages (the registry's `corrections
 * follow` and `corrector forgotten`, lib/knowledge/kinds.ts): each rewrite only over the
 * correction read, so that a person's newer correction made meanwhile is never overwritten.
 */
import type { QuestionCorrection } from "../store/correction-item.js";
import type { ResultStore } from "../store/port.js";

type CorrectionStore = Pick<ResultStore, "listCorrections" | "saveCorrection">;

/** Tries per correction when a person writes it again meanwhile. */
const MAX_TRIES = 5;

/**
 * Rewrites each of the channel's corrections `change` changes (undefined: removes it), reading
 * them again when one was written meanwhile. Resolves to how many it changed.
 */
async function rewrite(
  store: CorrectionStore,
  channel: string,
  change: (c: QuestionCorrection) => QuestionCorrection | undefined | "same",
): Promise<number> {
  let changed = 0;
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    let conflict = false;
    for (const correction of await store.listCorrections(channel)) {
      const next = change(correction);
      if (next === "same") continue;
      if (await store.saveCorrection(next, correction)) changed++;
      else conflict = true;
    }
    if (!conflict) return changed;
  }
  return changed;
}

/**
 * The channel's corrections after the messages `deleted` went: one whose asking message went is
 * removed (its question goes with it); one whose answering message went keeps its status
 * without it (`answerRemoved`).
 */
export function redactCorrections(
  store: CorrectionStore,
  channel: string,
  deleted: readonly string[],
): Promise<number> {
  if (deleted.length === 0) return Promise.resolve(0);
  const gone = new Set(deleted);
  return rewrite(store, channel, (c) => {
    if (gone.has(c.askedId)) return undefined;
    if (c.answerId === undefined || !gone.has(c.answerId)) return "same";
    const { answerId: _, ...kept } = c;
    return { ...kept, answerRemoved: true };
  });
}

/**
 * The channel's corrections made by a person, kept without who made them: `identities` are
 * their user ids and names (names compared without case, as people write them).
 */
export function forgetCorrector(
  store: CorrectionStore,
  channel: string,
  identities: readonly string[],
): Promise<number> {
  const known = new Set(identities.map((i) => i.trim().toLowerCase()));
  if (known.size === 0) return Promise.resolve(0);
  return rewrite(store, channel, (c) => {
    if (c.by === undefined || !known.has(c.by.trim().toLowerCase())) return "same";
    const { by: _, ...kept } = c;
    return kept;
  });
}
