/**
 * The signals of a reply link (Elsner & Charniak 2008; Kummerfeld et al. 2019), in three blocks so
 * that scoring a hundred candidates costs little: what the new message says on its own (`query`),
 * what a candidate says on its own (`content`, computed once per message), and what holds between
 * the two (`pair`). Each block is a fixed-length vector of numbers in [0, 1].
 */
import { CUE, overlap, type TextCues } from "./text.js";
import type { Entry, Window } from "./window.js";

const MINUTE = 60_000;

function bin(value: number, cuts: readonly number[], out: Float64Array, at: number): number {
  let k = 0;
  while (k < cuts.length && value >= (cuts[k] as number)) k++;
  // k is the bin index among cuts.length + 1 bins; bin 0 (below the first cut) is left implicit.
  if (k > 0) out[at + k - 1] = 1;
  return at + cuts.length;
}

function cueFlags(cues: TextCues, out: Float64Array, at: number): number {
  const flags = cues.flags;
  out[at] = flags & CUE.question ? 1 : 0;
  out[at + 1] = flags & CUE.questionWord ? 1 : 0;
  out[at + 2] = flags & CUE.thanks ? 1 : 0;
  out[at + 3] = flags & CUE.greeting ? 1 : 0;
  out[at + 4] = flags & CUE.answerStart ? 1 : 0;
  out[at + 5] = flags & CUE.url ? 1 : 0;
  out[at + 6] = flags & CUE.code ? 1 : 0;
  out[at + 7] = flags & CUE.action ? 1 : 0;
  out[at + 8] = flags & CUE.command ? 1 : 0;
  return at + 9;
}

const LENGTH_CUTS = [3, 7, 16];
const GAP_CUTS = [1, 2, 10];

/** Features of a message on its own, as a candidate parent. */
export const CONTENT_SIZE = 3 + 9 + LENGTH_CUTS.length + 1;
export function contentFeatures(entry: Entry, out: Float64Array): void {
  out.fill(0);
  out[0] = entry.mentions.length > 0 ? 1 : 0;
  out[1] = entry.leading >= 0 ? 1 : 0;
  out[2] = entry.bot ? 1 : 0;
  let at = cueFlags(entry.cues, out, 3);
  at = bin(entry.cues.length, LENGTH_CUTS, out, at);
  out[at] = entry.cues.words.length === 0 ? 1 : 0;
}

/** Features of the new message in its window: the same for every candidate. */
export const QUERY_SIZE = CONTENT_SIZE + 2 + 4 + 3 + 3 + 1 + 1 + 3 + 3;
export function queryFeatures(window: Window, query: Entry, out: Float64Array): void {
  contentFeatures(query, out);
  let at = CONTENT_SIZE;
  const previous = query.previousByAuthor;
  out[at++] = previous >= 0 ? 1 : 0;
  out[at++] = previous >= 0 && window.at(previous).mentions.length > 0 ? 1 : 0;
  if (previous >= 0) {
    bin(query.position - previous, [2, 6, 21, 60], out, at);
    at += 4;
    bin((query.ts - window.at(previous).ts) / MINUTE, GAP_CUTS, out, at);
    at += 3;
  } else at += 7;
  const horizon = Math.max(window.horizon(query.position), 0);
  let recent = 0;
  for (let p = query.position - 1; p >= horizon; p--) {
    if (query.ts - window.at(p).ts > 5 * MINUTE) break;
    recent++;
  }
  at = bin(recent, [5, 15, 40], out, at);
  const before = query.position - 1 >= horizon ? window.at(query.position - 1) : undefined;
  out[at++] = before !== undefined && before.author === query.author ? 1 : 0;
  out[at++] = before === undefined ? 1 : 0;
  at = bin(before === undefined ? 0 : (query.ts - before.ts) / MINUTE, [1, 5, 30], out, at);
  out[at++] = query.position - horizon < window.size ? 1 : 0;
  out[at++] = query.mentions.length > 1 ? 1 : 0;
  out[at++] = query.leading >= 0 && query.mentions.length === 0 ? 1 : 0;
}

const DISTANCE_CUTS = [2, 3, 4, 6, 11, 21, 51];
const TIME_CUTS = [1, 2, 5, 15, 60];
const SHARED_CUTS = [1, 2, 4];
const AFTER_CUTS = [1, 3];

/**
 * The pair features that depend on the distance in messages alone: `[1, DISTANCE_END)` of the pair
 * block, so a scorer may add their weights from a table indexed by distance instead.
 */
export const DISTANCE_END = 3 + DISTANCE_CUTS.length;
export function distanceFeatures(distance: number, out: Float64Array): number {
  out[1] = Math.min(distance, 100) / 100;
  out[2] = distance === 1 ? 1 : 0;
  return bin(distance, DISTANCE_CUTS, out, 3);
}

/**
 * What every pair of one new message shares, computed once per message: the latest message that
 * addressed its author.
 */
export class PairContext {
  addressingQuery = -1;

  begin(window: Window, query: Entry): void {
    this.addressingQuery = window.latestAddressing(query.author, query.position);
  }
}

/** How many messages `candidate`'s author wrote after it and before `query`: 0, 1, 2 or 3 (3+). */
function spokenSince(window: Window, candidate: Entry, query: Entry): number {
  let next = candidate.nextByAuthor;
  let count = 0;
  while (count < 3 && next >= 0 && next < query.position) {
    count++;
    next = window.at(next).nextByAuthor;
  }
  return count;
}

/** Candidates nearer than this are always scored; farther ones only with a sign of a link. */
const NEAR = 30;

/**
 * Whether a candidate is scored at all: a near one always; a far one when its author is the new
 * message's, either addresses the other's author, or it is its author's latest message. A far
 * candidate with none of these is almost never the parent (under 1% of the training split's links)
 * and skipping it halves the work.
 */
export function considered(query: Entry, candidate: Entry): boolean {
  if (query.position - candidate.position <= NEAR) return true;
  const qa = query.author;
  const ca = candidate.author;
  if (qa === ca || query.mentions.includes(ca) || candidate.mentions.includes(qa)) return true;
  const next = candidate.nextByAuthor;
  return next < 0 || next >= query.position;
}

/**
 * Features of a (new message, candidate) pair; `candidate` undefined is "starts a conversation".
 * `context.begin(window, query)` comes first.
 */
export const PAIR_SIZE =
  3 +
  DISTANCE_CUTS.length +
  1 +
  TIME_CUTS.length +
  14 +
  SHARED_CUTS.length +
  4 +
  AFTER_CUTS.length +
  4;
const shared = new Float64Array(3);
export function pairFeatures(
  window: Window,
  query: Entry,
  candidate: Entry | undefined,
  context: PairContext,
  out: Float64Array,
): void {
  out.fill(0);
  if (candidate === undefined) {
    out[0] = 1;
    return;
  }
  let at = distanceFeatures(query.position - candidate.position, out);
  const minutes = (query.ts - candidate.ts) / MINUTE;
  out[at++] = Math.min(minutes, 100) / 100;
  at = bin(minutes, TIME_CUTS, out, at);
  const qa = query.author;
  const ca = candidate.author;
  const same = qa === ca;
  const queryNames = query.mentions.includes(ca);
  out[at++] = queryNames ? 1 : 0;
  out[at++] = query.leading === ca && !same ? 1 : 0;
  out[at++] = candidate.mentions.includes(qa) ? 1 : 0;
  out[at++] = candidate.leading === qa && !same ? 1 : 0;
  out[at++] = same ? 1 : 0;
  let common = false;
  for (const m of query.mentions) if (candidate.mentions.includes(m)) common = true;
  out[at++] = common ? 1 : 0;
  out[at++] = query.previousByAuthor < candidate.position ? 1 : 0;
  const after = spokenSince(window, candidate, query);
  const candidateLatest = after === 0;
  out[at++] = candidateLatest ? 1 : 0;
  out[at++] = query.previousByAuthor === candidate.position ? 1 : 0;
  out[at++] = queryNames && candidateLatest ? 1 : 0;
  out[at++] = context.addressingQuery === candidate.position ? 1 : 0;
  const horizon = window.horizon(query.position);
  out[at++] = !same && window.addressedWithin(qa, ca, horizon, candidate.position) ? 1 : 0;
  out[at++] =
    !same && window.addressedWithin(qa, ca, candidate.position + 1, query.position) ? 1 : 0;
  out[at++] = !same && window.addressedWithin(ca, qa, horizon, candidate.position) ? 1 : 0;
  overlap(query.cues, candidate.cues, shared);
  const count = shared[0] as number;
  at = bin(count, SHARED_CUTS, out, at);
  out[at++] = candidate.cues.words.length > 0 ? count / candidate.cues.words.length : 0;
  out[at++] = query.cues.words.length > 0 ? count / query.cues.words.length : 0;
  out[at++] = Math.min(shared[1] as number, 20) / 20;
  out[at++] = Math.min(shared[2] as number, 10) / 10;
  at = bin(after, AFTER_CUTS, out, at);
  const parentAuthor = candidate.previousByAuthor;
  out[at++] = parentAuthor >= 0 && window.at(parentAuthor).mentions.includes(qa) ? 1 : 0;
  out[at++] =
    (candidate.cues.flags & CUE.question) !== 0 && (query.cues.flags & CUE.question) === 0 ? 1 : 0;
  out[at++] = (query.cues.flags & (CUE.thanks | CUE.answerStart)) !== 0 && !same ? 1 : 0;
  out[at++] = query.ts === candidate.ts ? 1 : 0;
}
