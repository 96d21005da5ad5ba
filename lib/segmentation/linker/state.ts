/**
 * A reply linker's memory between runs (`ReplyLinker.snapshot`, `ReplyLinker.restore`): its
 * window's image (`Window.image`) as bytes, in base64. Numbers, hashes and message ids only: words
 * are their 32-bit hashes, people and the names that address them 52-bit keys (`nameKey`).
 *
 * Format 2, varints unsigned LEB128, keys 7 bytes little-endian:
 * - byte 1 (the format); varint window size; varint next position; byte time mode (0: varint
 *   zigzag deltas, 1: float64); varint k, then k identity keys (author `i` is the i-th); varint
 *   gone (authors numbered from k on, addressed but gone from the window);
 * - varint n, then n names: key, varint author, varint age (`next - 1 - position`);
 * - the window's `min(next, size)` messages, oldest first: varint `cues·4 + opaque·2 + bot`,
 *   varint token count, varint author, varint leading address + 1, varint age of the author's
 *   previous message (0 none), time; id (unless opaque: varint length, UTF-8); conversation
 *   (varint 0 the id, 1 then a string, 2 then a stand-in's key, 2 + j the same as j messages
 *   back); varint w, w × int32 word hash; varint m, m × varint author;
 * - varint b, then b messages before the window: varint `low - position`, varint m, m × author.
 *
 * Format 1 (before 2026-12-07) is read too: the same, with a byte after each word hash (its
 * rarity, which no decision after the message's own reads).
 */

import { MAX_ID_BYTES, STAND_IN, storable } from "./keys.js";
import { MAX_WORDS } from "./text.js";
import {
  type BeforeImage,
  type Entry,
  MAX_MENTIONS,
  type NameImage,
  NO_NAMES,
  NO_RARITY,
  type WindowImage,
} from "./window.js";

/**
 * A reply linker's memory of a channel between runs: a JSON-safe string (base64; its first byte
 * the format's version), at most {@link MAX_LINKER_STATE_BYTES} long for the shipped model.
 */
export type LinkerState = string;

const VERSION = 2;
/** The format before words lost their rarity byte: still read, never written. */
const WITH_RARITY = 1;
const KEY_BYTES = 7;
const KEY_LIMIT = 2 ** 52;
/** Cue flags fit 16 bits (text.ts uses 9). */
const CUE_LIMIT = 2 ** 16;
/** Time deltas stored as varints up to this size; beyond it, or not integers, as float64. */
const DELTA_LIMIT = 2 ** 50;

/** Bytes of a varint holding values up to `max`. */
function varintBytes(max: number): number {
  let bytes = 1;
  for (let v = max; v >= 0x80; v = Math.floor(v / 0x80)) bytes++;
  return bytes;
}

/**
 * The most bytes a state's binary form may take for a window of `size`, term by term: every count
 * at its cap (`size` messages and authors, 3 names per message, {@link MAX_WORDS} words and
 * {@link MAX_MENTIONS} mentions per message, ids and conversations of {@link MAX_ID_BYTES}).
 */
function maxBinaryBytes(size: number, version = VERSION): number {
  const wordBytes = version === WITH_RARITY ? 5 : 4;
  const authors = size;
  const gone = size * (MAX_MENTIONS + 1);
  const author = varintBytes(authors - 1);
  const anyone = varintBytes(authors + gone);
  const header = 1 + varintBytes(size) + 8 + 1 + varintBytes(authors) + authors * KEY_BYTES;
  const names = varintBytes(gone) + varintBytes(3 * size) + 3 * size * (KEY_BYTES + author + 2);
  const string = varintBytes(MAX_ID_BYTES) + MAX_ID_BYTES;
  const entry =
    varintBytes(CUE_LIMIT * 4) +
    5 + // token count: under 2^29, the longest string V8 holds
    author +
    anyone +
    varintBytes(size) +
    8 + // time
    string +
    varintBytes(size + 1) + // conversation: same as, a string, or a stand-in's key
    string +
    varintBytes(MAX_WORDS) +
    MAX_WORDS * wordBytes +
    varintBytes(MAX_MENTIONS) +
    MAX_MENTIONS * anyone;
  const before = varintBytes(size) + size * (varintBytes(size) + 1 + MAX_MENTIONS * author);
  return header + names + size * entry + before;
}

/**
 * The most a linker state of the shipped model (a window of 100 messages) takes as JSON, in bytes
 * (base64 is ASCII): 4/3 of the longest binary form, plus two quotes, 78,158 bytes. A channel that
 * sends the worst it can reaches 93% of it; Ubuntu IRC's states average 5.2 kB (3.4 kB deflated),
 * 6.8 kB at most.
 */
export const MAX_LINKER_STATE_BYTES = 2 + 4 * Math.ceil(maxBinaryBytes(100) / 3);

/** Writes a state's bytes into a buffer kept between calls (encoding is synchronous). */
class Writer {
  private static scratch = new Uint8Array(16_384);
  private bytes = Writer.scratch;
  private view = new DataView(this.bytes.buffer);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + n));
    grown.set(this.bytes);
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
    Writer.scratch = grown;
  }

  byte(v: number): void {
    this.room(1);
    this.bytes[this.length++] = v;
  }

  varint(v: number): void {
    this.room(8);
    while (v >= 0x80) {
      this.bytes[this.length++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.bytes[this.length++] = v;
  }

  key(v: number): void {
    this.room(KEY_BYTES);
    for (let i = 0; i < KEY_BYTES; i++) {
      this.bytes[this.length++] = v % 256;
      v = Math.floor(v / 256);
    }
  }

  int32(v: number): void {
    this.room(4);
    this.view.setInt32(this.length, v, true);
    this.length += 4;
  }

  float64(v: number): void {
    this.room(8);
    this.view.setFloat64(this.length, v, true);
    this.length += 8;
  }

  string(s: string): void {
    let ascii = s.length < 0x80;
    for (let i = 0; ascii && i < s.length; i++) ascii = s.charCodeAt(i) < 0x80;
    if (ascii) {
      this.room(1 + s.length);
      this.bytes[this.length++] = s.length;
      for (let i = 0; i < s.length; i++) this.bytes[this.length++] = s.charCodeAt(i);
      return;
    }
    const utf8 = encoder.encode(s);
    this.varint(utf8.length);
    this.room(utf8.length);
    this.bytes.set(utf8, this.length);
    this.length += utf8.length;
  }

  base64(): string {
    return Buffer.from(this.bytes.buffer, 0, this.length).toString("base64");
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

function invalid(what: string): RangeError {
  return new RangeError(`linker state: ${what}`);
}

class Reader {
  private at = 0;
  private readonly view: DataView;

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private need(n: number, what: string): void {
    if (this.at + n > this.bytes.length) throw invalid(`ends inside ${what}`);
  }

  get done(): boolean {
    return this.at === this.bytes.length;
  }

  byte(what: string): number {
    this.need(1, what);
    return this.bytes[this.at++] as number;
  }

  /** A varint of at most `max`. */
  varint(what: string, max: number): number {
    let v = 0;
    let scale = 1;
    for (let i = 0; ; i++) {
      const b = this.byte(what);
      v += (b & 0x7f) * scale;
      if (b < 0x80) break;
      scale *= 0x80;
      if (i === 7) throw invalid(`${what} is not a varint`);
    }
    if (v > max) throw invalid(`${what} ${v} is over ${max}`);
    return v;
  }

  key(what: string): number {
    this.need(KEY_BYTES, what);
    let v = 0;
    for (let i = KEY_BYTES - 1; i >= 0; i--) v = v * 256 + (this.bytes[this.at + i] as number);
    this.at += KEY_BYTES;
    if (v >= KEY_LIMIT) throw invalid(`${what} is not a 52-bit key`);
    return v;
  }

  int32(what: string): number {
    this.need(4, what);
    const v = this.view.getInt32(this.at, true);
    this.at += 4;
    return v;
  }

  float64(what: string): number {
    this.need(8, what);
    const v = this.view.getFloat64(this.at, true);
    this.at += 8;
    return v;
  }

  string(what: string): string {
    const length = this.varint(`${what}'s length`, MAX_ID_BYTES);
    this.need(length, what);
    const utf8 = this.bytes.subarray(this.at, this.at + length);
    this.at += length;
    try {
      return decoder.decode(utf8);
    } catch {
      throw invalid(`${what} is not UTF-8`);
    }
  }
}

const zigzag = (v: number) => (v >= 0 ? v * 2 : -v * 2 - 1);
const unzigzag = (v: number) => (v % 2 === 0 ? v / 2 : -(v + 1) / 2);

/** Whether every time can be written as a varint difference from the one before. */
function integerTimes(entries: readonly Entry[]): boolean {
  let previous = 0;
  for (const { ts } of entries) {
    if (!Number.isSafeInteger(ts) || Object.is(ts, -0) || Math.abs(ts - previous) > DELTA_LIMIT)
      return false;
    previous = ts;
  }
  return true;
}

export function encodeState(image: WindowImage): LinkerState {
  const w = new Writer();
  w.byte(VERSION);
  w.varint(image.size);
  w.varint(image.next);
  const deltas = integerTimes(image.entries);
  w.byte(deltas ? 0 : 1);
  w.varint(image.authors.length);
  for (const key of image.authors) w.key(key);
  w.varint(image.gone);
  w.varint(image.names.length);
  const last = image.next - 1;
  for (const name of image.names) {
    w.key(name.key);
    w.varint(name.author);
    w.varint(last - name.position);
  }
  const low = image.next - image.entries.length;
  const latest = new Map<string, number>();
  let previousTs = 0;
  image.entries.forEach((e, i) => {
    const cues = e.cues;
    w.varint(cues.flags * 4 + (e.opaque ? 2 : 0) + (e.bot ? 1 : 0));
    w.varint(cues.length);
    w.varint(e.author);
    w.varint(e.leading + 1);
    w.varint(e.previousByAuthor < 0 ? 0 : low + i - e.previousByAuthor);
    if (deltas) w.varint(zigzag(e.ts - previousTs));
    else w.float64(e.ts);
    previousTs = e.ts;
    if (!e.opaque) w.string(e.id);
    const same = latest.get(e.conversation);
    if (!e.opaque && e.conversation === e.id) w.varint(0);
    else if (same !== undefined) w.varint(2 + i - same);
    else if (!storable(e.conversation)) {
      w.varint(2);
      w.key(Number.parseInt(e.conversation.slice(STAND_IN.length), 36));
    } else {
      w.varint(1);
      w.string(e.conversation);
    }
    latest.set(e.conversation, i);
    w.varint(cues.words.length);
    for (let j = 0; j < cues.words.length; j++) w.int32(cues.words[j] as number);
    w.varint(e.mentions.length);
    for (const m of e.mentions) w.varint(m);
  });
  w.varint(image.before.length);
  for (const b of image.before) {
    w.varint(low - b.position);
    w.varint(b.mentions.length);
    for (const m of b.mentions) w.varint(m);
  }
  return w.base64();
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The image a state holds, checked throughout so that a window rebuilt from it cannot fail later:
 * a `RangeError` ("linker state: …") names the first thing wrong.
 */
export function decodeState(state: unknown, size: number): WindowImage {
  if (typeof state !== "string") throw invalid(`a ${typeof state}, not a string`);
  const longest = 4 * Math.ceil(maxBinaryBytes(size, WITH_RARITY) / 3);
  if (state.length > longest)
    throw invalid(`${state.length} characters, over the ${longest} of a window of ${size}`);
  if (!BASE64.test(state)) throw invalid("not base64");
  const r = new Reader(Buffer.from(state, "base64"));
  const version = r.byte("the format");
  if (version !== VERSION && version !== WITH_RARITY)
    throw invalid(`format ${version}, this linker reads ${WITH_RARITY} and ${VERSION}`);
  const stored = r.varint("the window size", Number.MAX_SAFE_INTEGER);
  if (stored !== size) throw invalid(`a window of ${stored} messages, the model's is ${size}`);
  const next = r.varint("the next position", Number.MAX_SAFE_INTEGER);
  const low = Math.max(0, next - size);
  const count = next - low;
  const mode = r.byte("the time mode");
  if (mode > 1) throw invalid(`time mode ${mode}`);
  const k = r.varint("the author count", count);
  const authors: number[] = [];
  for (let i = 0; i < k; i++) authors.push(r.key("an author's key"));
  const gone = r.varint("the gone author count", count * (MAX_MENTIONS + 1));
  const everyone = k + gone;
  const names: NameImage[] = [];
  const nameCount = r.varint("the name count", 3 * count);
  for (let i = 0; i < nameCount; i++) {
    const key = r.key("a name's key");
    const author = r.varint("a name's author", k - 1);
    names.push({ key, author, position: next - 1 - r.varint("a name's age", count - 1) });
  }
  const entries: Entry[] = [];
  let ts = 0;
  for (let i = 0; i < count; i++) {
    const position = low + i;
    const bits = r.varint("a message's flags", CUE_LIMIT * 4 - 1);
    const opaque = (bits & 2) !== 0;
    const length = r.varint("a message's length", 2 ** 32);
    const author = r.varint("a message's author", k - 1);
    const leading = r.varint("a message's leading address", everyone) - 1;
    const age = r.varint("a message's previous by its author", Math.min(size, position));
    const previousByAuthor = age === 0 ? -1 : position - age;
    if (previousByAuthor >= low && entries[previousByAuthor - low]?.author !== author)
      throw invalid(`message ${position}'s previous by its author is another's`);
    ts = mode === 0 ? ts + unzigzag(r.varint("a time", 2 * DELTA_LIMIT)) : r.float64("a time");
    const id = opaque ? "" : r.string("a message id");
    const tag = r.varint("a conversation", i + 2);
    let conversation: string;
    if (tag === 0) {
      if (opaque) throw invalid("an opaque message's conversation is its id");
      conversation = id;
    } else if (tag === 1) conversation = r.string("a conversation");
    else if (tag === 2) conversation = `${STAND_IN}${r.key("a conversation").toString(36)}`;
    else conversation = (entries[i - (tag - 2)] as Entry).conversation;
    const wordCount = r.varint("a word count", MAX_WORDS);
    const words = new Int32Array(wordCount);
    for (let j = 0; j < wordCount; j++) {
      words[j] = r.int32("a word");
      if (j > 0 && (words[j] as number) <= (words[j - 1] as number))
        throw invalid(`message ${position}'s words are not in order`);
      if (version === WITH_RARITY) r.byte("a word's rarity");
    }
    const mentions = readMentions(r, everyone, MAX_MENTIONS, "a message");
    const flags = Math.floor(bits / 4);
    entries.push({
      id,
      position,
      ts,
      author,
      bot: (bits & 1) !== 0,
      cues: { words, rarity: NO_RARITY, names: NO_NAMES, leadingAddress: undefined, flags, length },
      mentions,
      leading,
      previousByAuthor,
      nextByAuthor: -1,
      conversation,
      opaque,
    });
  }
  const before: BeforeImage[] = [];
  const beforeCount = r.varint("the count of messages before the window", k);
  for (let i = 0; i < beforeCount; i++) {
    const position = low - r.varint("a message before the window", Math.min(size, low));
    if (position >= low || (i > 0 && position <= (before[i - 1] as BeforeImage).position))
      throw invalid("the messages before the window are not in order");
    before.push({ position, mentions: readMentions(r, k, MAX_MENTIONS, "a message before") });
  }
  if (!r.done) throw invalid("bytes left after its end");
  return { size, next, authors, gone, names, entries, before };
}

function readMentions(r: Reader, authors: number, max: number, what: string): number[] {
  const mentions: number[] = [];
  const count = r.varint(`${what}'s mention count`, max);
  for (let j = 0; j < count; j++) {
    const m = r.varint(`${what}'s mention`, authors - 1);
    if (mentions.includes(m)) throw invalid(`${what} mentions an author twice`);
    mentions.push(m);
  }
  return mentions;
}
