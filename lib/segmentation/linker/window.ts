/**
 * The linker's bounded memory of a channel: the last `size` messages it linked, each read once
 * (its cues, the authors it addresses), and what the features ask of them. Every feature of a
 * message reads only this window (and whom each author's message before it addressed), so its
 * `image` holds all a later decision needs: a window rebuilt from it (`Window.from`, behind
 * `ReplyLinker.restore`) decides exactly as the one that never stopped. People are known by keys,
 * hashes of their names and ids, never by the names themselves.
 */
import { nameKey, standIn, storable } from "./keys.js";
import { asciiKept, type RarityTable, readCues, type TextCues, trimEdges } from "./text.js";

/** A message as the linker reads it. */
export interface LinkerMessage {
  /** The message's id, unique within the channel. */
  readonly id: string;
  /** Epoch milliseconds. */
  readonly ts: number;
  /** The author's display name (IRC nick, Slack or Discord display name). */
  readonly author: string;
  /** The author's platform id, when it differs from the name (Slack `U…`, Discord snowflake). */
  readonly authorId?: string;
  readonly text: string;
  /** `system` lines (joins, parts) are never linked nor linked to; `bot` marks a bot's message. */
  readonly kind?: "user" | "bot" | "system";
}

export interface Entry {
  readonly id: string;
  readonly position: number;
  readonly ts: number;
  readonly author: number;
  readonly bot: boolean;
  readonly cues: TextCues;
  /** Authors this message addresses (at most {@link MAX_MENTIONS}), resolved in its window. */
  readonly mentions: readonly number[];
  /** The author its first token addresses, if known. */
  readonly leading: number;
  /** Position of this author's previous message in the window, or -1. */
  readonly previousByAuthor: number;
  /** Position of this author's next message, once there is one, else -1. */
  nextByAuthor: number;
  /**
   * The id of its conversation's first message, set once the message is linked; one that is not
   * {@link storable} is kept as a stand-in (`standIn`), the same live and restored.
   */
  conversation: string;
  /**
   * Its id or conversation is not {@link storable}: it still counts as a message of the window
   * (and of its conversation), but nothing links to it.
   */
  opaque: boolean;
}

/** Authors a message addresses that the window keeps: a bound on what a stored window holds. */
export const MAX_MENTIONS = 8;
/** What a window keeps for the messages after it (`Window.image`); `state.ts` encodes it. */
export interface WindowImage {
  readonly size: number;
  /** The position the next message will get. */
  readonly next: number;
  /**
   * Identity keys of the authors who wrote within the window: author `i` is `authors[i]`. Numbers
   * from `authors.length` to `authors.length + gone - 1` stand for authors addressed by its
   * messages who have not written since the window's start.
   */
  readonly authors: readonly number[];
  readonly gone: number;
  /** Name keys written within the window, with their author and position, by position. */
  readonly names: readonly NameImage[];
  /**
   * The window's messages, oldest first, the last at `next - 1`: `min(next, size)` of them, with
   * authors numbered as above, no id if opaque, and only what the window reads of their cues.
   */
  readonly entries: readonly Entry[];
  /**
   * Messages before the window that an author's first message in it follows, whom they addressed
   * (authors who wrote within the window only), by position; only those that addressed someone.
   */
  readonly before: readonly BeforeImage[];
}

export interface NameImage {
  readonly key: number;
  readonly author: number;
  readonly position: number;
}

export interface BeforeImage {
  readonly position: number;
  readonly mentions: readonly number[];
}

const NO_AUTHOR = -1;
export const NO_NAMES: readonly string[] = [];
/** A window's image keeps no word's rarity: only the message being linked reads its own. */
export const NO_RARITY = new Float64Array(0);

/** Strips a nick's decoration ("|trey|" → "trey", "bob_" → "bob") the way people shorten it. */
function nickCore(name: string): string {
  return trimEdges(name, ALPHANUMERIC, NICK_EDGE);
}
const NICK_EDGE = /^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu;
const ALPHANUMERIC = asciiKept(/[\p{L}\p{N}]/u);

/** Where a name was last written, and by whom. */
interface Mark {
  readonly author: number;
  readonly position: number;
}

export class Window {
  readonly size: number;
  private readonly rarity: RarityTable;
  /** Entries in position order; `entries[0]` holds position `first`. */
  private entries: Entry[] = [];
  private first = 0;
  private next = 0;
  private nextAuthor = 0;
  /** Identity key (of the lower-cased platform id, else name) → author number. */
  private readonly identities = new Map<number, number>();
  /** Keys of lower-cased names, their cores and ids → who last wrote under them, and where. */
  private readonly names = new Map<number, Mark>();
  /** Author number → position of their latest message. */
  private readonly latest = new Map<number, number>();

  constructor(size: number, rarity: RarityTable) {
    this.size = size;
    this.rarity = rarity;
  }

  /** The position the next appended message will get. */
  get end(): number {
    return this.next;
  }

  /** The oldest position a message at `position` may look at. */
  horizon(position: number): number {
    return Math.max(0, position - this.size);
  }

  at(position: number): Entry {
    return this.entries[position - this.first] as Entry;
  }

  /** The latest entry of message `id` that may be linked to, within the window of the next one. */
  find(id: string): Entry | undefined {
    for (let p = this.next - 1; p >= this.horizon(this.next); p--) {
      const entry = this.at(p);
      if (entry.id === id && !entry.opaque) return entry;
    }
    return undefined;
  }

  /** Position of `author`'s latest message, if within the window of the next one, else -1. */
  private latestBy(author: number): number {
    const at = this.latest.get(author);
    return at !== undefined && at >= this.horizon(this.next - 1) ? at : -1;
  }

  /** Reads `message` into the window and returns its entry (the message is not linked here). */
  append(message: LinkerMessage): Entry {
    const position = this.next++;
    const author = this.authorOf(message, position);
    const cues = readCues(message.text, this.rarity);
    const mentions: number[] = [];
    for (const name of cues.names) {
      if (mentions.length === MAX_MENTIONS) break;
      const target = this.resolve(name, position);
      if (target !== NO_AUTHOR && target !== author && !mentions.includes(target))
        mentions.push(target);
    }
    // "bo: …" addresses bo however short the nick: the colon says so, unlike a word in passing.
    const leading =
      cues.leadingAddress === undefined
        ? NO_AUTHOR
        : this.resolve(cues.leadingAddress, position, 1);
    if (leading !== NO_AUTHOR && leading !== author && !mentions.includes(leading)) {
      if (mentions.length === MAX_MENTIONS) mentions.pop();
      mentions.unshift(leading);
    }
    const entry: Entry = {
      id: message.id,
      position,
      ts: message.ts,
      author,
      bot: message.kind === "bot",
      cues,
      mentions,
      leading,
      previousByAuthor: this.latestBy(author),
      nextByAuthor: -1,
      conversation: standIn(message.id),
      opaque: !storable(message.id),
    };
    this.add(entry, this.first);
    this.trim();
    return entry;
  }

  /** Sets the conversation of a linked entry; one that is not storable makes it opaque. */
  settle(entry: Entry, conversation: string): void {
    entry.conversation = standIn(conversation);
    if (entry.conversation !== conversation) entry.opaque = true;
  }

  /**
   * Makes conversations `a` and `b` one, from position `from` on (the linked message's horizon:
   * no later message looks farther back, and a restored window starts no earlier): the one whose
   * messages there come first keeps its id (a conversation is named by its first message) and
   * takes the other's. Returns the id kept and the id given up.
   */
  merge(a: string, b: string, from: number): { kept: string; gone: string } {
    let kept = a;
    for (let p = from; p < this.next; p++) {
      const conversation = this.at(p).conversation;
      if (conversation === a || conversation === b) {
        kept = conversation;
        break;
      }
    }
    const gone = kept === a ? b : a;
    // A kept stand-in is already one: its messages are opaque, as `settle` makes them.
    const opaque = !storable(kept);
    for (let p = from; p < this.next; p++) {
      const entry = this.at(p);
      if (entry.conversation !== gone) continue;
      entry.conversation = kept;
      if (opaque) entry.opaque = true;
    }
    return { kept, gone };
  }

  /** Adds an entry at the end; its author's previous message, if at `from` or later, precedes it. */
  private add(entry: Entry, from: number): void {
    const position = entry.position;
    if (entry.previousByAuthor >= from) this.at(entry.previousByAuthor).nextByAuthor = position;
    this.entries.push(entry);
    this.latest.set(entry.author, position);
  }

  /**
   * The author number of a message: its platform id (else its name) names the person; a person
   * not heard from within the window gets a new number, so what lies past the window never counts.
   * Their name, its core and their id then resolve to them when someone addresses them.
   */
  private authorOf(message: LinkerMessage, position: number): number {
    const identity = nameKey((message.authorId ?? message.author).toLowerCase());
    let author = this.identities.get(identity);
    if (author === undefined || !this.within(author, position)) {
      author = this.nextAuthor++;
      this.identities.set(identity, author);
    }
    const mark: Mark = { author, position };
    this.names.set(identity, mark);
    const name = message.author.toLowerCase();
    if (message.authorId !== undefined) this.names.set(nameKey(name), mark);
    const core = nickCore(name);
    if (core.length > 2 && core !== name) this.names.set(nameKey(core), mark);
    return author;
  }

  /** Whether `author` wrote within the window of a message at `position`. */
  private within(author: number, position: number): boolean {
    const at = this.latest.get(author);
    return at !== undefined && at >= this.horizon(position);
  }

  /**
   * The author a name-like token means: who last wrote under it within the window of `position`.
   * Names shorter than `shortest` are common words more often than nicks, and mean nobody.
   */
  private resolve(token: string, position: number, shortest = 3): number {
    const horizon = this.horizon(position);
    if (token.length >= shortest) {
      const mark = this.names.get(nameKey(token));
      if (mark !== undefined && mark.position >= horizon) return mark.author;
    }
    const core = nickCore(token);
    if (core.length >= shortest && core !== token) {
      const mark = this.names.get(nameKey(core));
      if (mark !== undefined && mark.position >= horizon) return mark.author;
    }
    return NO_AUTHOR;
  }

  /**
   * Forgets what no message from the last one on reads, amortized O(1) per append: beyond its
   * horizon, but for the messages a window's first ones follow (`pairFeatures` reads whom they
   * addressed).
   */
  private trim(): void {
    const horizon = this.horizon(this.next - 1);
    const keep = horizon - this.size;
    if (keep - this.first < this.size * 4) return;
    this.entries = this.entries.slice(keep - this.first);
    this.first = keep;
    for (const [author, at] of this.latest) if (at < horizon) this.latest.delete(author);
    for (const [key, mark] of this.names) if (mark.position < horizon) this.names.delete(key);
    for (const [key, author] of this.identities)
      if (!this.latest.has(author)) this.identities.delete(key);
  }

  /**
   * All the next messages' decisions need, authors numbered afresh (by first message in the
   * window, then the gone ones by first mention) and nothing in it a name: the same for a window
   * and for one rebuilt from its image.
   */
  image(): WindowImage {
    const low = this.horizon(this.next);
    const numbers = new Map<number, number>();
    const authors: number[] = [];
    const identityOf = new Map<number, number>();
    for (const [key, author] of this.identities)
      if (this.within(author, this.next)) identityOf.set(author, key);
    for (let p = low; p < this.next; p++) {
      const author = this.at(p).author;
      if (numbers.has(author)) continue;
      numbers.set(author, authors.length);
      authors.push(identityOf.get(author) as number);
    }
    const number = (author: number): number => {
      if (author === NO_AUTHOR) return NO_AUTHOR;
      const n = numbers.get(author) ?? numbers.size;
      numbers.set(author, n);
      return n;
    };
    const entries: Entry[] = [];
    const before: BeforeImage[] = [];
    for (let p = low; p < this.next; p++) {
      const entry = this.at(p);
      entries.push({
        ...entry,
        id: entry.opaque ? "" : entry.id,
        cues: { ...entry.cues, rarity: NO_RARITY, names: NO_NAMES, leadingAddress: undefined },
        author: number(entry.author),
        mentions: entry.mentions.map(number),
        leading: number(entry.leading),
        nextByAuthor: -1,
      });
      const previous = entry.previousByAuthor;
      if (previous < 0 || previous >= low) continue;
      const mentions: number[] = [];
      for (const target of this.at(previous).mentions) {
        const n = numbers.get(target);
        if (n !== undefined && n < authors.length) mentions.push(n);
      }
      if (mentions.length > 0) before.push({ position: previous, mentions });
    }
    before.sort((a, b) => a.position - b.position);
    const names: NameImage[] = [];
    for (const [key, mark] of this.names)
      if (mark.position >= low)
        names.push({ key, author: numbers.get(mark.author) as number, position: mark.position });
    names.sort((a, b) => a.position - b.position || a.key - b.key);
    const gone = numbers.size - authors.length;
    return { size: this.size, next: this.next, authors, gone, names, entries, before };
  }

  /**
   * A window rebuilt from an image (checked by `state.ts`), with `rarity` for what comes next; it
   * takes the image's entries over.
   */
  static from(image: WindowImage, rarity: RarityTable): Window {
    const window = new Window(image.size, rarity);
    const low = window.horizon(image.next);
    window.next = low;
    window.first = window.horizon(low);
    for (let p = window.first; p < low; p++) window.entries.push(GAP);
    for (const { position, mentions } of image.before)
      window.entries[position - window.first] = { ...GAP, position, mentions };
    window.nextAuthor = image.authors.length + image.gone;
    for (const [author, key] of image.authors.entries()) window.identities.set(key, author);
    for (const { key, author, position } of image.names)
      window.names.set(key, { author, position });
    for (const entry of image.entries) {
      if (entry.position !== window.next++) throw new RangeError("Window.from: misplaced entry");
      window.add(entry, low);
    }
    return window;
  }
}

/** A message before the window, as far as the window still knows it: whom it addressed. */
const GAP: Entry = Object.freeze({
  ...{ id: "", conversation: "", opaque: true, position: -1, ts: 0, bot: false, mentions: [] },
  ...{ author: NO_AUTHOR, leading: NO_AUTHOR, previousByAuthor: -1, nextByAuthor: -1 },
  cues: {
    ...{ words: new Int32Array(0), rarity: NO_RARITY, names: NO_NAMES },
    ...{ leadingAddress: undefined, flags: 0, length: 0 },
  },
});
