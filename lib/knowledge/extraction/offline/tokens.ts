/**
 * How the offline extractor reads a message: URLs and e-mail addresses cut out whole, then words
 * and technical terms (`#[macro_use]`, `std::ffi`, `/etc/fstab`, `--force`, `grub2`, `c++`) in
 * order, with a break wherever a phrase cannot go on (punctuation, a refused token). Linear in
 * the text: every pattern is anchored to what it consumes, with bounded repetition.
 */
import { GENERAL, STOPWORDS, stem } from "./words.js";

/** A word or technical term that may be (part of) a topic. */
export interface Word {
  /** As written, without surrounding punctuation or a possessive `'s`. */
  surface: string;
  /** Lower case: what names and stopwords are compared with. */
  lower: string;
  /** What inflections share: the stem of a plain word, the lower case of anything else. */
  key: string;
  /** Not a plain word: digits, inner punctuation, a path, a flag, an attribute, camelCase. */
  technical: boolean;
  /** Too general to be a topic alone: only part of a phrase. */
  general: boolean;
  /**
   * May open a phrase: not a general word of English ("fresh install", not "get work-items");
   * the words of the channel's name may ("rust analyzer" in #rust).
   */
  opens: boolean;
  /** Holds a digit (`sdb1`, `grub2`): a phrase holds at most one such word. */
  digits: boolean;
}

/** What the reader knows of the segment: who takes part, which words are general there. */
export interface Context {
  /** Lower case: names that are never part of a topic. */
  names: ReadonlySet<string>;
  /** Lower case, as written and stemmed: words general in this channel only (its name's). */
  general: ReadonlySet<string>;
}

/** `undefined` stands for a break: no phrase spans it. */
export type Piece = Word | undefined;

/** Tokens longer than this are junk (hashes, encoded data), never topics. */
const MAX_TOKEN_CHARS = 48;

/** URLs (any scheme, or `www.`), `host.tld/path`, and e-mail addresses: never topics, nor parts. */
const URL =
  /(?:(?<!\p{L})[a-z][a-z0-9+.-]{0,15}:\/\/|(?<!\p{L})www\.)[^\s<>"'`]*|\b[\p{L}\p{N}_-]{1,63}(?:\.[\p{L}\p{N}_-]{1,63}){1,8}\/[^\s<>"'`]*|\b[\p{L}\p{N}_.+-]{1,64}@[\p{L}\p{N}-]{1,63}(?:\.[\p{L}\p{N}-]{1,63}){1,8}/giu;

/**
 * One token: a Rust-style attribute, a path, a long flag, or a word with inner `::`, `->`, `.`,
 * `-`, `+`, `'` or `@` between its parts and an optional `++`, `#` or `()` after it.
 */
const TOKEN =
  /#!?\[[^\]\n]{1,80}\]|(?<![\p{L}\p{N}_])(?:~|\.{1,2})?\/[\p{L}\p{N}_.+@-]{1,64}(?:\/[\p{L}\p{N}_.+@-]{0,64}){0,16}|(?<![\p{L}\p{N}_-])--[\p{L}\p{N}][\p{L}\p{N}_-]{0,40}|[\p{L}\p{N}_$]{1,64}(?:(?:::|->|[.'’+@-])[\p{L}\p{N}_$]{1,64}){0,16}(?:\+\+|#)?(?:\(\))?/gu;

/**
 * A meeting bot's command or echo opening a line (MeetBot's `#topic`, `#action`, `#agreed`;
 * MootBot's `[TOPIC]`, `ACTION received:`): the meeting's markup, never its subject.
 */
const MEETING_WORDS =
  "topic|subtopic|action|agreed|accepted|rejected|info|idea|link|vote|endvote|startmeeting|endmeeting|chair|unchair|item|progress";
const MEETING_MARK = new RegExp(
  `^\\s*(?:[#[](?:${MEETING_WORDS})\\]?|(?:action|agreed|idea|link|info) received:)(?=\\s|$)`,
  "iu",
);
/**
 * A chat bot's command opening a line: `/start` alone, or `/stats@SomeBot …` naming its bot
 * (Telegram's, Discord's and Slack's slash commands). A path alone (`/etc`) reads the same, and
 * is rarely a whole message.
 */
const BOT_COMMAND = /^\s*\/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{1,64}(?=\s|$)|\s*$)/u;
/** A bracketed mark anywhere: MootBot lists its commands as `[TOPIC], [IDEA], [ACTION]`. */
const BRACKETED_MARK = new RegExp(`\\[(?:${MEETING_WORDS})\\]`, "giu");

const LETTER = /\p{L}/u;
/** What is left of an mIRC colour code whose control character was lost: `10Name`, `03(mod)`. */
const COLOUR_RESIDUE = /^(?:0\d|1[0-5])(?=\p{L})/u;
/** Ordinals, decades, hexadecimal and scientific notation, sizes and rates: numbers too. */
const NUMBERLIKE =
  /^(?:\d+(?:st|nd|rd|th|s)|0x[0-9a-f]+|\d*\.?\d+e[-+]?\d+|e[-+]\d+|\d+(?:[.,]\d+)*(?:[kmgt]i?b|[kmg]hz|px|ms|fps|mbps))$/iu;
const NOT_LETTER = /[^\p{L}]/u;
const CAMEL = /\p{Ll}\p{Lu}/u;
const HEX_ID = /^(?=[0-9a-f]*\d)[0-9a-f]{7,}$/i;
/** `fabio__`, `nick_`: an IRC nickname's spare form, never a subject. */
const SPARE_NICK = /^\p{L}[\p{L}\p{N}]*_+$/u;
const DIGIT = /\p{N}/u;
const POSSESSIVE = /['’]s$/iu;
const TRAILING = /[.,:;!?'’]+$/u;

/**
 * The pieces of `text` in order, past a meeting bot's mark or a chat bot's command. `names`
 * (lower case) are the segment's participants: a token that is one is a break, like stopwords,
 * numbers, tokens of one or two characters, and junk.
 */
export function pieces(written: string, context: Context): Piece[] {
  const out: Piece[] = [];
  // A mark is a break, as punctuation is: no phrase spans it.
  const text = written.replace(BRACKETED_MARK, ";");
  let from = (MEETING_MARK.exec(text) ?? BOT_COMMAND.exec(text))?.[0].length ?? 0;
  for (const url of text.matchAll(URL)) {
    scan(text.slice(from, url.index), context, out);
    out.push(undefined);
    from = url.index + url[0].length;
  }
  scan(text.slice(from), context, out);
  return out;
}

function scan(text: string, context: Context, out: Piece[]): void {
  let end = 0;
  for (const match of text.matchAll(TOKEN)) {
    // Only whitespace may join two words into a phrase.
    if (match.index > end && text.slice(end, match.index).trim() !== "") out.push(undefined);
    end = match.index + match[0].length;
    const piece = word(match[0], context);
    // An attribute, a path or a flag is a term on its own, never part of a phrase.
    const alone = piece !== undefined && /^(?:#|~|\.{0,2}\/|--)/u.test(piece.surface);
    if (alone) out.push(undefined, piece, undefined);
    else out.push(piece);
  }
  if (text.slice(end).trim() !== "") out.push(undefined);
}

/** A word with more than letters, or camelCase: its key is its lower case, not a stem. */
function isTechnical(surface: string): boolean {
  return NOT_LETTER.test(surface) || CAMEL.test(surface);
}

/** How a word stands in the channel's terms: lower case, stemmed unless technical. */
export function wordKey(surface: string): string {
  const lower = surface.toLowerCase();
  return isTechnical(surface) ? lower : stem(lower);
}

/** The token as a word, or a break when it can never be part of a topic. */
function word(token: string, context: Context): Piece {
  const attribute = token.startsWith("#");
  let surface = attribute
    ? token
    : token.replace(COLOUR_RESIDUE, "").replace(TRAILING, "").replace(POSSESSIVE, "");
  if (!attribute && surface.length > 1 && surface.endsWith("/")) surface = surface.slice(0, -1);
  const chars = [...surface].length;
  if (chars <= 2 || chars > MAX_TOKEN_CHARS || !LETTER.test(surface) || NUMBERLIKE.test(surface)) {
    return undefined;
  }
  const lower = surface.toLowerCase();
  if (context.names.has(lower) || STOPWORDS.has(lower)) return undefined;
  if (HEX_ID.test(surface) || SPARE_NICK.test(surface)) return undefined;
  const technical = isTechnical(surface);
  const key = wordKey(surface);
  if (STOPWORDS.has(key)) return undefined;
  const english = GENERAL.has(lower) || GENERAL.has(key);
  const local = context.general.has(lower) || context.general.has(key);
  return {
    surface,
    lower,
    key,
    technical,
    general: english || local,
    opens: !english,
    digits: DIGIT.test(surface),
  };
}
