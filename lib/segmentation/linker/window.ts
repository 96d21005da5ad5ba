/**
 * The linker's bounded memory of a channel: the last `size` messages it linked, each read once
 * (its cues, the authors it addresses), and what the features ask of them. Every feature of a
 * message reads only this window, so a linker rebuilt from the last `2 × size` stored messages
 * decides exactly as the one that saw the whole channel (`ReplyLinker.warm`).
 */
import { type RarityTable, readCues, type TextCues } from "./text.js";

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
  /** Authors this message addresses, resolved against the authors of its own window. */
  readonly mentions: readonly number[];
  /** The author its first token addresses, if known. */
  readonly leading: number;
  /** Position of this author's previous message in the window, or -1. */
  readonly previousByAuthor: number;
  /** Position of this author's next message, once there is one, else -1. */
  nextByAuthor: number;
  /** Model-specific projection of the message's own features, filled by the scorer. */
  projection: Float64Array | undefined;
  /** The id of its conversation's first message, set once the message is linked. */
  conversation: string;
}

const NO_AUTHOR = -1;

/** Strips a nick's decoration ("|trey|" → "trey", "bob_" → "bob") the way people shorten it. */
function nickCore(name: string): string {
  return name.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");
}

export class Window {
  readonly size: number;
  private readonly rarity: RarityTable;
  /** Entries in position order; `entries[0]` holds position `first`. */
  private entries: Entry[] = [];
  private first = 0;
  private next = 0;
  private nextAuthor = 0;
  /** Lower-cased platform id (else name) → author number. */
  private readonly identities = new Map<string, number>();
  /** Lower-cased names, their cores and ids → the author who last wrote under them. */
  private readonly names = new Map<string, number>();
  /** Message id → position, for the messages kept. */
  private readonly positions = new Map<string, number>();
  /** Author number → position of their latest message. */
  private readonly latest = new Map<number, number>();
  /** Author number → the positions at which they addressed someone: [position, target]. */
  private readonly addressed = new Map<number, number[]>();

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

  /** The entry of message `id` if it is within the window of the next message. */
  find(id: string): Entry | undefined {
    const position = this.positions.get(id);
    return position !== undefined && position >= this.horizon(this.next)
      ? this.at(position)
      : undefined;
  }

  /** Position of `author`'s latest message before `before`, within the window, or -1. */
  latestBy(author: number, before: number): number {
    const at = this.latest.get(author);
    if (at === undefined || at >= before) return this.scanBack(author, before);
    return at >= this.horizon(before) ? at : -1;
  }

  private scanBack(author: number, before: number): number {
    for (let p = before - 1; p >= this.horizon(before) && p >= this.first; p--)
      if (this.at(p).author === author) return p;
    return -1;
  }

  /**
   * Where `from` addressed `to` within `[low, high)`: 0 none, else 1. Reads the bounded list of
   * `from`'s addresses, so it costs nothing for people who address nobody.
   */
  addressedWithin(from: number, to: number, low: number, high: number): boolean {
    const list = this.addressed.get(from);
    if (list === undefined) return false;
    for (let i = list.length - 2; i >= 0; i -= 2) {
      const position = list[i] as number;
      if (position < low) return false;
      if (position < high && list[i + 1] === to) return true;
    }
    return false;
  }

  /** Position of the latest message before `before` (within the window) addressing `to`, or -1. */
  latestAddressing(to: number, before: number): number {
    for (let p = before - 1; p >= this.horizon(before) && p >= this.first; p--) {
      const mentions = this.at(p).mentions;
      for (let i = 0; i < mentions.length; i++) if (mentions[i] === to) return p;
    }
    return -1;
  }

  /** Reads `message` into the window and returns its entry (the message is not linked here). */
  append(message: LinkerMessage): Entry {
    const position = this.next++;
    const author = this.authorOf(message, position);
    const cues = readCues(message.text, this.rarity);
    const mentions: number[] = [];
    for (const name of cues.names) {
      const target = this.resolve(name, position);
      if (target !== NO_AUTHOR && target !== author && !mentions.includes(target))
        mentions.push(target);
    }
    const leading =
      cues.leadingAddress === undefined ? NO_AUTHOR : this.resolve(cues.leadingAddress, position);
    const entry: Entry = {
      id: message.id,
      position,
      ts: message.ts,
      author,
      bot: message.kind === "bot",
      cues,
      mentions,
      leading,
      previousByAuthor: this.latestBy(author, position),
      nextByAuthor: -1,
      projection: undefined,
      conversation: message.id,
    };
    if (entry.previousByAuthor >= this.first)
      this.at(entry.previousByAuthor).nextByAuthor = position;
    this.entries.push(entry);
    this.positions.set(entry.id, position);
    this.latest.set(author, position);
    if (mentions.length > 0) {
      const list = this.addressed.get(author) ?? [];
      if (list.length === 0) this.addressed.set(author, list);
      for (const target of mentions) list.push(position, target);
    }
    this.trim();
    return entry;
  }

  /**
   * The author number of a message: its platform id (else its name) names the person; a person
   * not heard from within the window gets a new number, so what lies past the window never counts.
   * Their name, its core and their id then resolve to them when someone addresses them.
   */
  private authorOf(message: LinkerMessage, position: number): number {
    const identity = (message.authorId ?? message.author).toLowerCase();
    let author = this.identities.get(identity);
    if (author === undefined || !this.within(author, position)) author = this.nextAuthor++;
    this.identities.set(identity, author);
    const name = message.author.toLowerCase();
    this.names.set(identity, author);
    this.names.set(name, author);
    const core = nickCore(name);
    if (core.length > 2) this.names.set(core, author);
    return author;
  }

  /** Whether `author` wrote within the window of a message at `position`. */
  private within(author: number, position: number): boolean {
    const at = this.latest.get(author);
    return at !== undefined && at >= this.horizon(position);
  }

  /** The author a name-like token means, if they wrote within the window of `position`. */
  private resolve(token: string, position: number): number {
    let author = token.length > 2 ? this.names.get(token) : undefined;
    if (author === undefined) {
      const core = nickCore(token);
      if (core.length > 2) author = this.names.get(core);
    }
    return author !== undefined && this.within(author, position) ? author : NO_AUTHOR;
  }

  /** Forgets what lies past the horizon of every future message, amortized O(1) per append. */
  private trim(): void {
    const keep = this.horizon(this.next) - this.size;
    if (keep - this.first < this.size * 4) return;
    for (const entry of this.entries.slice(0, keep - this.first)) this.positions.delete(entry.id);
    this.entries = this.entries.slice(keep - this.first);
    this.first = keep;
    const horizon = this.horizon(this.next);
    for (const [author, at] of this.latest) if (at < horizon) this.latest.delete(author);
    for (const [name, author] of this.names) if (!this.latest.has(author)) this.names.delete(name);
    for (const [key, author] of this.identities)
      if (!this.latest.has(author)) this.identities.delete(key);
    for (const [author, list] of this.addressed) {
      let cut = 0;
      while (cut < list.length && (list[cut] as number) < horizon) cut += 2;
      if (cut === list.length) this.addressed.delete(author);
      else if (cut > 0) list.splice(0, cut);
    }
  }
}
