/**
 * What every candidate of one new message shares, computed once per message (`PairContext.begin`):
 * who addressed its author last, the conversations the linker's own decisions made of the window,
 * and the words the new message shares with each message and each conversation there.
 */
import { CUE } from "./text.js";
import type { Entry, Window } from "./window.js";

// Read once: a loader may make each imported binding a getter.
const QUESTION = CUE.question;

/**
 * What every pair of one new message shares, computed once per message: the latest message that
 * addressed its author, and the conversations the linker's own earlier decisions made of the
 * window (each entry's `conversation`), with what the pair features ask of each.
 */
export class PairContext {
  addressingQuery = -1;
  /** Conversations (local numbers, this message only) in the window: how many. */
  conversations = 0;
  /** Per window position (`position & mask`): its conversation's local number. */
  local = new Int32Array(0);
  /** Per local conversation: messages in the window, latest position, latest time. */
  size = new Int32Array(0);
  last = new Int32Array(0);
  lastTs = new Float64Array(0);
  /** Per local conversation: bit flags, `CONV`. */
  flags = new Int32Array(0);
  /** Per local conversation: its first two authors (-1 none); MANY marks a third. */
  authorA = new Int32Array(0);
  authorB = new Int32Array(0);
  /**
   * Per window position: the words the new message shares with it (how many, their
   * summed and largest rarity); per local conversation, the largest summed rarity of its
   * messages; and of all conversations, the largest and whose (-1 none shares a word).
   */
  sharedCount = new Float64Array(0);
  sharedSum = new Float64Array(0);
  sharedMax = new Float64Array(0);
  topic = new Float64Array(0);
  bestTopic = 0;
  bestConversation = -1;
  /** The local conversation of the new message's author's previous message in the window, or -1. */
  own = -1;
  /** Per window position: `MARK` bits, what holds between it and the new message's author. */
  marks = new Uint8Array(0);
  /**
   * Per window position, copied from its entry when read, so that the walk over the window reads
   * a few small arrays instead of a hundred scattered entries: its content words (how many),
   * whether it asks, and its author's next message before the new one (-1 none yet).
   */
  wordCount = new Int32Array(0);
  asks = new Uint8Array(0);
  nextByAuthor = new Int32Array(0);
  mask = 0;
  /** The window read so far, the next position to read and each read position's predecessor. */
  private window: Window | undefined;
  private read = 0;
  private same = new Int32Array(0);
  private author = new Int32Array(0);
  private ts = new Float64Array(0);
  private previousByAuthor = new Int32Array(0);
  private latestOf = new Map<string, number>();
  /** Word hash → the read positions holding it, ascending (those past the horizon swept now and then). */
  private postings = new Map<number, number[]>();
  /** Author → the read positions that name them, ascending (swept with the postings). */
  private namings = new Map<number, number[]>();
  private sweepAt = 0;
  /** The positions (`& mask`) whose shared words the last message set: all else reads zero. */
  private touched = new Int32Array(0);
  private touchedCount = 0;
  /** Per window position: it names the new message's author (set, read and cleared per message). */
  private namesQuery = new Uint8Array(0);
  /** Whom the new message's author named in the window: first and latest position, per author. */
  private readonly targets: number[] = [];
  private readonly targetFirst: number[] = [];
  private readonly targetLast: number[] = [];

  /** The window's conversations changed (`Window.merge`): what was read of them is stale. */
  forget(): void {
    this.read = Number.POSITIVE_INFINITY;
  }

  begin(window: Window, query: Entry): void {
    const horizon = window.horizon(query.position);
    if (window !== this.window || query.position < this.read || this.mask < window.size + 1)
      this.reset(window);
    this.readTo(window, horizon, query.position);
    const mask = this.mask;
    const same = this.same;
    const qa = query.author;
    const named = query.mentions;
    const local = this.local;
    const { size, last, lastTs, flags, authorA, authorB, topic, marks } = this;
    const { sharedSum, asks, namesQuery } = this;
    const authorAt = this.author;
    const tsAt = this.ts;
    const previousAt = this.previousByAuthor;
    this.shareWords(query, horizon);
    const naming = this.namings.get(qa);
    if (naming !== undefined)
      for (let j = naming.length - 1; j >= 0 && (naming[j] as number) >= horizon; j--)
        namesQuery[(naming[j] as number) & mask] = 1;
    const targetCount = this.queryTargets(window, query, horizon);
    const { targets, targetFirst, targetLast } = this;
    // The latest message of the window that addressed the new message's author, found on the way.
    let addressing = -1;
    let n = 0;
    for (let p = horizon; p < query.position; p++) {
      const at = p & mask;
      const author = authorAt[at] as number;
      const before = same[at] as number;
      let l: number;
      if (before < horizon) {
        l = n++;
        size[l] = 0;
        flags[l] = author === qa ? ROOT_QUERY : 0;
        if (author === qa && asks[at] === 1) flags[l] |= ROOT_ASKED;
        authorA[l] = author;
        authorB[l] = -1;
        topic[l] = 0;
      } else l = local[before & mask] as number;
      const sum = sharedSum[at] as number;
      if (sum > (topic[l] as number)) topic[l] = sum;
      local[at] = l;
      size[l] = (size[l] as number) + 1;
      last[l] = p;
      lastTs[l] = tsAt[at] as number;
      let f = flags[l] as number;
      let mark = named.length > 0 && named.includes(author) ? NAMED_BY_QUERY : 0;
      if (author === qa) f |= QUERY_WROTE;
      else if (mark !== 0) f |= NAMED;
      if (namesQuery[at] === 1) {
        namesQuery[at] = 0;
        f |= ADDRESSED;
        addressing = p;
        mark |= NAMES_QUERY;
      }
      // Whether its author addressed the new message's author earlier in the window: their
      // previous message did, or one before it (the chain of an author's messages is unbroken).
      const previous = previousAt[at] as number;
      if (
        previous >= horizon &&
        ((marks[previous & mask] as number) & (NAMES_QUERY | NAMED_BEFORE)) !== 0
      )
        mark |= NAMED_BEFORE;
      for (let t = 0; t < targetCount; t++)
        if (targets[t] === author) {
          if ((targetFirst[t] as number) < p) mark |= QUERY_NAMED_BEFORE;
          if ((targetLast[t] as number) > p) mark |= QUERY_NAMED_AFTER;
          break;
        }
      marks[at] = mark;
      if (author !== authorA[l]) {
        if (authorB[l] === -1) authorB[l] = author;
        else if (author !== authorB[l]) f |= MANY;
      }
      flags[l] = f;
    }
    this.conversations = n;
    this.addressingQuery = addressing;
    const previous = query.previousByAuthor;
    this.own = previous >= horizon ? (local[previous & mask] as number) : -1;
    let best = 0;
    let bestAt = -1;
    for (let l = 0; l < n; l++)
      if ((topic[l] as number) > best) {
        best = topic[l] as number;
        bestAt = l;
      }
    this.bestTopic = best;
    this.bestConversation = bestAt;
  }

  private reset(window: Window): void {
    this.window = window;
    let ring = 2;
    while (ring < window.size + 2) ring *= 2;
    this.mask = ring - 1;
    this.same = new Int32Array(ring);
    this.local = new Int32Array(ring);
    this.size = new Int32Array(ring);
    this.last = new Int32Array(ring);
    this.lastTs = new Float64Array(ring);
    this.flags = new Int32Array(ring);
    this.authorA = new Int32Array(ring);
    this.authorB = new Int32Array(ring);
    this.sharedCount = new Float64Array(ring);
    this.sharedSum = new Float64Array(ring);
    this.sharedMax = new Float64Array(ring);
    this.topic = new Float64Array(ring);
    this.marks = new Uint8Array(ring);
    this.wordCount = new Int32Array(ring);
    this.asks = new Uint8Array(ring);
    this.nextByAuthor = new Int32Array(ring);
    this.author = new Int32Array(ring);
    this.ts = new Float64Array(ring);
    this.previousByAuthor = new Int32Array(ring);
    this.touched = new Int32Array(ring);
    this.touchedCount = 0;
    this.namesQuery = new Uint8Array(ring);
    this.latestOf.clear();
    this.postings.clear();
    this.namings.clear();
    this.sweepAt = 0;
    this.read = 0;
  }

  /** Reads the entries not read yet, up to `end`, each once. */
  private readTo(window: Window, horizon: number, end: number): void {
    const mask = this.mask;
    const latestOf = this.latestOf;
    const postings = this.postings;
    const namings = this.namings;
    if (this.read < horizon) this.read = horizon;
    for (let p = this.read; p < end; p++) {
      const entry = window.at(p);
      const at = p & mask;
      const conversation = entry.conversation;
      const before = latestOf.get(conversation);
      this.same[at] = before === undefined ? -1 : before;
      latestOf.set(conversation, p);
      this.author[at] = entry.author;
      this.ts[at] = entry.ts;
      const previous = entry.previousByAuthor;
      this.previousByAuthor[at] = previous;
      this.nextByAuthor[at] = -1;
      // An earlier position's slot holds it still (or one not read yet, to be overwritten).
      if (previous >= 0) this.nextByAuthor[previous & mask] = p;
      this.asks[at] = (entry.cues.flags & QUESTION) !== 0 ? 1 : 0;
      const words = entry.cues.words;
      this.wordCount[at] = words.length;
      for (let i = 0; i < words.length; i++) index(postings, words[i] as number, p);
      const mentions = entry.mentions;
      for (let i = 0; i < mentions.length; i++) index(namings, mentions[i] as number, p);
    }
    this.read = end;
    if (latestOf.size > 4 * window.size)
      for (const [conversation, at] of latestOf) if (at < horizon) latestOf.delete(conversation);
    // Lists are read from their end down to the horizon: sweeping them only bounds their memory.
    if (end >= this.sweepAt) {
      this.sweepAt = end + 4 * window.size;
      sweep(postings, horizon);
      sweep(namings, horizon);
    }
  }

  /**
   * The words the new message shares with each message of the window: through the postings of
   * its own few words, in their ascending order, so each sum adds the same terms in the same
   * order as merging the two sorted lists would.
   */
  private shareWords(query: Entry, horizon: number): void {
    const mask = this.mask;
    const { sharedCount, sharedSum, sharedMax, touched } = this;
    for (let i = 0; i < this.touchedCount; i++) {
      const at = touched[i] as number;
      sharedCount[at] = 0;
      sharedSum[at] = 0;
      sharedMax[at] = 0;
    }
    let touchedCount = 0;
    const qw = query.cues.words;
    const qr = query.cues.rarity;
    for (let i = 0; i < qw.length; i++) {
      const list = this.postings.get(qw[i] as number);
      if (list === undefined) continue;
      const r = qr[i] as number;
      for (let j = list.length - 1; j >= 0; j--) {
        const p = list[j] as number;
        if (p < horizon) break;
        const at = p & mask;
        if (sharedCount[at] === 0) touched[touchedCount++] = at;
        sharedCount[at] = (sharedCount[at] as number) + 1;
        sharedSum[at] = (sharedSum[at] as number) + r;
        if (r > (sharedMax[at] as number)) sharedMax[at] = r;
      }
    }
    this.touchedCount = touchedCount;
  }

  /** Whom the new message's author named in the window, from their messages there; how many. */
  private queryTargets(window: Window, query: Entry, horizon: number): number {
    const { targets, targetFirst, targetLast } = this;
    let count = 0;
    for (
      let p = query.previousByAuthor;
      p >= horizon;
      p = this.previousByAuthor[p & this.mask] as number
    ) {
      const mentions = window.at(p).mentions;
      for (let i = 0; i < mentions.length; i++) {
        const target = mentions[i] as number;
        let t = 0;
        while (t < count && targets[t] !== target) t++;
        if (t === count) {
          targets[count] = target;
          targetLast[count++] = p;
        }
        // Walked latest first: each position met is the earliest so far.
        targetFirst[t] = p;
      }
    }
    return count;
  }
}

function index(lists: Map<number, number[]>, key: number, position: number): void {
  const list = lists.get(key);
  if (list === undefined) lists.set(key, [position]);
  else list.push(position);
}

/** Drops the positions before `horizon` from each list, and the lists left empty. */
function sweep(lists: Map<number, number[]>, horizon: number): void {
  for (const [key, list] of lists) {
    let cut = 0;
    while (cut < list.length && (list[cut] as number) < horizon) cut++;
    if (cut === list.length) lists.delete(key);
    else if (cut > 0) list.splice(0, cut);
  }
}

/** Bit flags of `PairContext.flags`, one per conversation. */
export const CONV = {
  queryWrote: 1,
  rootQuery: 2,
  rootAsked: 4,
  addressed: 8,
  named: 16,
  many: 32,
} as const;
const { queryWrote: QUERY_WROTE, rootQuery: ROOT_QUERY, rootAsked: ROOT_ASKED } = CONV;
const { addressed: ADDRESSED, named: NAMED, many: MANY } = CONV;

/** Bits of `PairContext.marks`, one set per window position. */
export const MARK = {
  /** The new message names its author. */
  namedByQuery: 1,
  /** It names the new message's author. */
  namesQuery: 2,
  /** An earlier message of its author in the window names the new message's author. */
  namedBefore: 4,
  /** A message of the new message's author in the window, before it, names its author. */
  queryNamedBefore: 8,
  /** One after it names its author. */
  queryNamedAfter: 16,
} as const;
const { namedByQuery: NAMED_BY_QUERY, namesQuery: NAMES_QUERY, namedBefore: NAMED_BEFORE } = MARK;
const { queryNamedBefore: QUERY_NAMED_BEFORE, queryNamedAfter: QUERY_NAMED_AFTER } = MARK;
