/**
 * The signals of a reply link (Elsner & Charniak 2008; Kummerfeld et al. 2019), in three blocks so
 * that scoring a hundred candidates costs little: what the new message says on its own (`query`),
 * what a candidate says on its own (`content`, computed once per message), and what holds between
 * the two (`pair`). Each block is a fixed-length vector of numbers in [0, 1].
 */
import { CONV, MARK, type PairContext } from "./context.js";
import { CUE, type TextCues } from "./text.js";
import type { Entry, Window } from "./window.js";

const MINUTE = 60_000;
// The imports read once: a hot path then reads plain constants, whatever the module loader makes
// of an imported binding.
const QUESTION = CUE.question;
const QUERY_WROTE = CONV.queryWrote;
const ROOT_QUERY = CONV.rootQuery;
const ROOT_ASKED = CONV.rootAsked;
const ADDRESSED = CONV.addressed;
const NAMED = CONV.named;
const MANY = CONV.many;
const NAMED_BY_QUERY = MARK.namedByQuery;
const NAMES_QUERY = MARK.namesQuery;
const NAMED_BEFORE = MARK.namedBefore;
const QUERY_NAMED_BEFORE = MARK.queryNamedBefore;
const QUERY_NAMED_AFTER = MARK.queryNamedAfter;
const THANKS_OR_ANSWER = CUE.thanks | CUE.answerStart;
const ADDRESS_EITHER_WAY = NAMED_BY_QUERY | NAMES_QUERY;

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
 * How many messages the author of the candidate at `c` (`position & mask`) wrote after it and
 * before the new message: 0, 1, 2 or 3 (3+).
 */
function spokenSince(context: PairContext, c: number): number {
  const nextByAuthor = context.nextByAuthor;
  let next = nextByAuthor[c] as number;
  let count = 0;
  while (count < 3 && next >= 0) {
    count++;
    next = nextByAuthor[next & context.mask] as number;
  }
  return count;
}

/** Candidates nearer than this are always scored; farther ones only with a sign of a link. */
const NEAR = 12;
/**
 * Older candidates are never scored: on a slow channel the window of 100 messages spans days, and
 * summed over a long-lived conversation, weak links to day-old messages outweighed starting one.
 * Of the 61,250 annotated links of the IRC data and training files, 14 go farther back in time.
 */
const MAX_AGE_MS = 6 * 3_600_000;

/**
 * Whether a candidate is scored at all: none more than 6 hours older than the new message; else
 * a near one always, and a far one when its author is the new message's or either addresses the
 * other's author (the `PairContext` marks: `context.begin(window, query)` comes first). A far
 * candidate with neither is seldom the parent: on the training split 297 of 52,604 links (0.6%;
 * 190 of them 13 to 20 back, near until 2026-12-07), and scoring them all took over a third of the
 * linker's time.
 */
export function considered(query: Entry, candidate: Entry, context: PairContext): boolean {
  if (query.ts - candidate.ts > MAX_AGE_MS) return false;
  if (query.position - candidate.position <= NEAR) return true;
  return (
    query.author === candidate.author ||
    ((context.marks[candidate.position & context.mask] as number) & ADDRESS_EITHER_WAY) !== 0
  );
}

const CONVERSATION_SIZE_CUTS = [2, 4, 8];
const ACTIVE_CUTS = [1, 5, 15];
const START_ACTIVE_CUTS = [2, 4, 7];
/**
 * The pair block's conversation features, read from the linker's own earlier decisions: the
 * last `CONVERSATION_SIZE` of the block, from `CONVERSATION_FROM` on. Its last
 * `START_ACTIVE_CUTS.length + 3` slots were meant for "starts a conversation" and read zero (the
 * start option's pair block is its indicator alone); they keep the model file's shape.
 */
const CONVERSATION_SIZE =
  CONVERSATION_SIZE_CUTS.length + ACTIVE_CUTS.length + 9 + START_ACTIVE_CUTS.length + 3;
const TOPIC_CUTS = [3, 6, 12];
/**
 * After them, what a model from before them reads as zero weights: the words the new message
 * shares with the candidate's conversation (its best-matching message there), and, for "starts a
 * conversation", how busy the window is, the author's own conversation and the best word match
 * of any conversation.
 */
const CANDIDATE_TOPIC_SIZE = 3 + TOPIC_CUTS.length;
const OPTION_SIZE = CANDIDATE_TOPIC_SIZE + START_ACTIVE_CUTS.length + 3 + 1 + TOPIC_CUTS.length;

/**
 * Features of a (new message, candidate) pair; `candidate` undefined is "starts a conversation".
 * `context.begin(window, query)` comes first. Dense, for the trainer; the linker reads the same
 * features sparse ({@link pairActive}).
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
  4 +
  CONVERSATION_SIZE +
  OPTION_SIZE;
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
    startFeatures(query, context, out);
    return;
  }
  distanceFeatures(query.position - candidate.position, out);
  pairActive(window, query, candidate, context, scratch);
  for (let j = 0; j < scratch.count; j++)
    out[scratch.index[j] as number] = scratch.value[j] as number;
}

/**
 * A pair's non-zero features from `DISTANCE_END` on, by ascending index: a scorer sums only
 * these (a third of the block at most), with no dense vector to clear or scan per candidate.
 */
export class SparsePair {
  readonly index = new Int32Array(PAIR_SIZE);
  readonly value = new Float64Array(PAIR_SIZE);
  count = 0;
}
const scratch = new SparsePair();

/** Appends feature `i` if non-zero (the dense form's zeros, `-0` included, are left out). */
function put(s: SparsePair, i: number, v: number): void {
  if (v === 0) return;
  s.index[s.count] = i;
  s.value[s.count++] = v;
}

/** {@link bin} into a sparse pair: the one-hot bin's index, if any. */
function binActive(value: number, cuts: readonly number[], s: SparsePair, at: number): number {
  let k = 0;
  while (k < cuts.length && value >= (cuts[k] as number)) k++;
  if (k > 0) put(s, at + k - 1, 1);
  return at + cuts.length;
}

/**
 * The features of a (new message, candidate) pair past the distance ones (those a scorer reads
 * from a table by distance), sparse, into `out`. `context.begin(window, query)` comes first.
 * `parts` CANDIDATE_ONLY leaves out the features of the candidate's conversation alone, which
 * {@link conversationActive} gives.
 */
export function pairActive(
  window: Window,
  query: Entry,
  candidate: Entry,
  context: PairContext,
  out: SparsePair,
  parts: number = BOTH,
): void {
  out.count = 0;
  let at = DISTANCE_END;
  const minutes = (query.ts - candidate.ts) / MINUTE;
  put(out, at++, Math.min(minutes, 100) / 100);
  at = binActive(minutes, TIME_CUTS, out, at);
  const qa = query.author;
  const ca = candidate.author;
  const same = qa === ca;
  const c = candidate.position & context.mask;
  const mark = context.marks[c] as number;
  const queryNames = (mark & NAMED_BY_QUERY) !== 0;
  if (queryNames) put(out, at, 1);
  if (query.leading === ca && !same) put(out, at + 1, 1);
  if ((mark & NAMES_QUERY) !== 0) put(out, at + 2, 1);
  if (candidate.leading === qa && !same) put(out, at + 3, 1);
  if (same) put(out, at + 4, 1);
  at += 5;
  const qm = query.mentions;
  if (qm.length > 0) {
    let common = false;
    for (let i = 0; i < qm.length; i++)
      if (candidate.mentions.includes(qm[i] as number)) common = true;
    if (common) put(out, at, 1);
  }
  at++;
  if (query.previousByAuthor < candidate.position) put(out, at, 1);
  at++;
  const after = spokenSince(context, c);
  const candidateLatest = after === 0;
  if (candidateLatest) put(out, at, 1);
  if (query.previousByAuthor === candidate.position) put(out, at + 1, 1);
  if (queryNames && candidateLatest) put(out, at + 2, 1);
  if (context.addressingQuery === candidate.position) put(out, at + 3, 1);
  at += 4;
  if (!same) {
    if ((mark & QUERY_NAMED_BEFORE) !== 0) put(out, at, 1);
    if ((mark & QUERY_NAMED_AFTER) !== 0) put(out, at + 1, 1);
    if ((mark & NAMED_BEFORE) !== 0) put(out, at + 2, 1);
  }
  at += 3;
  const count = context.sharedCount[c] as number;
  at = binActive(count, SHARED_CUTS, out, at);
  const cw = context.wordCount[c] as number;
  const qw = query.cues.words.length;
  if (cw > 0) put(out, at, count / cw);
  if (qw > 0) put(out, at + 1, count / qw);
  put(out, at + 2, Math.min(context.sharedSum[c] as number, 20) / 20);
  put(out, at + 3, Math.min(context.sharedMax[c] as number, 10) / 10);
  at += 4;
  at = binActive(after, AFTER_CUTS, out, at);
  // Whether the author's message before the candidate named the new message's author.
  const parentAuthor = candidate.previousByAuthor;
  if (
    parentAuthor >= window.horizon(query.position)
      ? ((context.marks[parentAuthor & context.mask] as number) & NAMES_QUERY) !== 0
      : parentAuthor >= 0 && window.at(parentAuthor).mentions.includes(qa)
  )
    put(out, at, 1);
  if (context.asks[c] === 1 && (query.cues.flags & QUESTION) === 0) put(out, at + 1, 1);
  if ((query.cues.flags & THANKS_OR_ANSWER) !== 0 && !same) put(out, at + 2, 1);
  if (query.ts === candidate.ts) put(out, at + 3, 1);
  at += 4;
  conversationFeatures(query, candidate, context.local[c] as number, c, context, out, at, parts);
}

/**
 * Which conversation features `pairActive` and `conversationActive` give: those that depend on
 * the candidate's conversation alone (the same for each of its candidates), those that depend on
 * the candidate itself, or both.
 */
const CONVERSATION_ONLY = 1;
export const CANDIDATE_ONLY = 2;
const BOTH = CONVERSATION_ONLY | CANDIDATE_ONLY;

/**
 * The pair features that depend only on the candidate's conversation (local number `l`), sparse,
 * into `out`: what a scorer may sum once per conversation instead of once per candidate, beside
 * `pairActive(…, CANDIDATE_ONLY)`. `context.begin(window, query)` comes first.
 */
export function conversationActive(
  query: Entry,
  l: number,
  context: PairContext,
  out: SparsePair,
): void {
  out.count = 0;
  conversationFeatures(query, undefined, l, -1, context, out, CONVERSATION_FROM, CONVERSATION_ONLY);
}

/** Where the conversation features begin in the pair block. */
export const CONVERSATION_FROM = PAIR_SIZE - CONVERSATION_SIZE - OPTION_SIZE;
/** The pair block's size before the option features (a model file of that size reads as zeros). */
export const PAIR_SIZE_BEFORE_OPTIONS = PAIR_SIZE - OPTION_SIZE;

/**
 * `l`: the candidate's local conversation; `c`: its position `& context.mask` (-1, and `candidate`
 * undefined, when `parts` leaves the candidate's own features out).
 */
function conversationFeatures(
  query: Entry,
  candidate: Entry | undefined,
  l: number,
  c: number,
  context: PairContext,
  out: SparsePair,
  at: number,
  parts: number,
): void {
  const own = context.own;
  const f = context.flags[l] as number;
  const ofConversation = (parts & CONVERSATION_ONLY) !== 0;
  const ofCandidate = (parts & CANDIDATE_ONLY) !== 0;
  if (ofConversation) {
    binActive(context.size[l] as number, CONVERSATION_SIZE_CUTS, out, at);
    binActive(
      (query.ts - (context.lastTs[l] as number)) / MINUTE,
      ACTIVE_CUTS,
      out,
      at + CONVERSATION_SIZE_CUTS.length,
    );
  }
  at += CONVERSATION_SIZE_CUTS.length + ACTIVE_CUTS.length;
  if (ofCandidate && context.last[l] === candidate?.position) put(out, at, 1);
  if (ofConversation) {
    if (f & QUERY_WROTE) put(out, at + 1, 1);
    if (own === l) put(out, at + 2, 1);
    if (own >= 0 && own !== l && (context.size[own] as number) >= 2) put(out, at + 3, 1);
    if (f & ROOT_QUERY) put(out, at + 4, 1);
    if (f & ROOT_ASKED) put(out, at + 5, 1);
    if (f & ADDRESSED) put(out, at + 6, 1);
    if (f & NAMED) put(out, at + 7, 1);
    if (f & MANY) put(out, at + 8, 1);
  }
  at += 9 + START_ACTIVE_CUTS.length + 3;
  const topic = context.topic[l] as number;
  if (ofConversation) {
    put(out, at, Math.min(topic, 20) / 20);
    if (l === context.bestConversation) put(out, at + 1, 1);
  }
  if (ofCandidate && topic > (context.sharedSum[c] as number)) put(out, at + 2, 1);
  if (!ofConversation) return;
  at = binActive(topic, TOPIC_CUTS, out, at + 3);
  // Whether the words point away from the author's own conversation (someone changing topic).
  if (own >= 0 && own !== l) {
    const ownTopic = context.topic[own] as number;
    if (topic > ownTopic) put(out, at, 1);
    else if (topic < ownTopic) put(out, at + 1, 1);
  }
}

/** The option features of "starts a conversation" (dense: once per message). */
function startFeatures(query: Entry, context: PairContext, out: Float64Array): void {
  let at = PAIR_SIZE_BEFORE_OPTIONS + CANDIDATE_TOPIC_SIZE;
  // How many conversations were active in the last five minutes.
  let active = 0;
  for (let l = 0; l < context.conversations; l++)
    if (query.ts - (context.lastTs[l] as number) <= 5 * MINUTE) active++;
  at = bin(active, START_ACTIVE_CUTS, out, at);
  const previous = query.previousByAuthor;
  const own = context.own;
  if (own >= 0) {
    out[at] = (context.size[own] as number) >= 2 ? 1 : 0;
    out[at + 1] = (context.flags[own] & MANY) !== 0 || context.authorB[own] !== -1 ? 1 : 0;
    out[at + 2] = context.last[own] === previous ? 1 : 0;
  }
  at += 3;
  out[at++] = Math.min(context.bestTopic, 20) / 20;
  at = bin(context.bestTopic, TOPIC_CUTS, out, at);
  if (own >= 0) {
    out[at] = Math.min(context.topic[own] as number, 20) / 20;
    out[at + 1] = context.bestTopic > (context.topic[own] as number) ? 1 : 0;
  }
}
