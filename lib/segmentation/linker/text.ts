/**
 * What the linker reads in a message's text: its words (hashed, with how rare each is), the names
 * it may address, and a few cues that mark questions, answers, thanks and greetings. Nothing of
 * the text is kept beyond these numbers.
 */

/** Flags of {@link TextCues.flags}, one bit each. */
export const CUE = {
  question: 1,
  questionWord: 2,
  thanks: 4,
  greeting: 8,
  answerStart: 16,
  url: 32,
  code: 64,
  action: 128,
  command: 256,
} as const;

export interface TextCues {
  /** Hashes of the distinct content words (the {@link MAX_WORDS} rarest), ascending. */
  readonly words: Int32Array;
  /**
   * Each word's rarity (inverse document frequency), aligned with `words`: read only while the
   * message is the one being linked, so a window's image keeps none (`NO_RARITY`).
   */
  readonly rarity: Float64Array;
  /** Lower-cased name-like tokens: candidates for an address ("nick:", "@name", "<@U123>"). */
  readonly names: readonly string[];
  /** Whether the first token addresses someone ("nick:" or "nick,"), IRC's reply convention. */
  readonly leadingAddress: string | undefined;
  readonly flags: number;
  /** Number of whitespace-separated tokens. */
  readonly length: number;
}

const STOPWORDS = new Set(
  (
    "a an the and or but if then so of to in on at by for with from as is are was were be been am " +
    "i you he she it we they me him her us them my your his its our their this that these those " +
    "do does did have has had will would can could should shall may might must not no yes ok " +
    "what which who whom whose when where why how there here just also too very all any some " +
    "about into out up down over than more most such only own same s t don dont im its it's " +
    "i'm you're that's there's get got go going know like want need use using try one"
  ).split(" "),
);
const STOPWORD_HASHES = new Set([...STOPWORDS].map(hashWord));
const QUESTION_WORDS = new Set(
  "how what why where when who which whats anyone anybody does do did is are can could should would will".split(
    " ",
  ),
);
const THANKS = /^(thanks?|thx|ty|tyvm|cheers|thank|merci|danke|gracias)\b/;
const THANKS_ANYWHERE = /\b(thanks|thank you|thx|ty)\b/;
const GREETING =
  /^(hi|hello|hey|heya|hiya|yo|morning|good (morning|evening|afternoon)|greetings|howdy)\b/;
const ANSWER_START =
  /^(yes|yeah|yep|yup|no|nope|nah|ok|okay|k|sure|right|indeed|correct|exactly|try|use|you (can|need|should|could|have)|it'?s|that'?s|type|run|just|maybe|probably|did you|have you|are you|what about|see)\b/;
const URL = /(https?:\/\/|www\.)\S/;
const CODE = /[`$]|\/\w+\/|\.(conf|list|sh|deb|so|py|txt)\b|\bsudo\b|--\w/;
const PLATFORM_MENTION = /^<@!?([\w.-]+)>/;
const TOKEN_EDGE = /^[^\p{L}\p{N}_|\\^`[\]{}-]+|[^\p{L}\p{N}_|\\^`[\]{}-]+$/gu;
/** Per ASCII code: whether `TOKEN_EDGE` keeps it (a letter, a digit or one of `_|\^`[]{}-`). */
const KEPT = asciiKept(/[\p{L}\p{N}_|\\^`[\]{}-]/u);

/** Per ASCII code, whether `kept` matches it. */
export function asciiKept(kept: RegExp): Uint8Array {
  const table = new Uint8Array(128);
  for (let c = 0; c < 128; c++) table[c] = kept.test(String.fromCharCode(c)) ? 1 : 0;
  return table;
}

/**
 * `token.replace(edge, "")`, `edge` stripping the characters `kept` does not keep from both ends
 * (`asciiKept`), without a regular expression while the edges are ASCII (most tokens, once per
 * word of every message).
 */
export function trimEdges(token: string, kept: Uint8Array, edge: RegExp): string {
  let start = 0;
  let end = token.length;
  for (; start < end; start++) {
    const c = token.charCodeAt(start);
    if (c >= 128) return token.replace(edge, "");
    if (kept[c] === 1) break;
  }
  for (; end > start; end--) {
    const c = token.charCodeAt(end - 1);
    if (c >= 128) return token.replace(edge, "");
    if (kept[c] === 1) break;
  }
  return start === 0 && end === token.length ? token : token.slice(start, end);
}

function stripEdges(token: string): string {
  return trimEdges(token, KEPT, TOKEN_EDGE);
}

/**
 * Words a message keeps, its rarest: a bound on what a stored window holds per message (under 1%
 * of the Ubuntu IRC corpus's lines have more distinct content words).
 */
export const MAX_WORDS = 24;

/**
 * Word rarity: `log(N / df)` from a document-frequency table shipped with the weights; a word the
 * table does not hold is as rare as the rarest it does.
 */
export interface RarityTable {
  /** `hash`: the word's {@link hashWord}, for a table keyed by it. */
  readonly lookup: (word: string, hash: number) => number;
}

/** 32-bit FNV-1a: stable across runs and platforms, so weights and cues agree everywhere. */
export function hashWord(word: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) {
    h ^= word.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

/**
 * The content words of a text, lower-cased, edges stripped of punctuation; stopwords dropped. The
 * pieces of the text between whitespace and `,;:!?()"<>`.
 */
export function contentWords(text: string): string[] {
  return wordsOf(tokensOf(text.toLowerCase().trim()), []);
}

/** A trimmed text's whitespace-separated tokens (only an empty text splits into an empty one). */
function tokensOf(lower: string): string[] {
  return lower === "" ? [] : lower.split(/\s+/);
}

/** Per ASCII code: whether it separates the words of a token. */
const WORD_BREAK = asciiKept(/[,;:!?()"<>]/);

/**
 * `contentWords` of a text's lower-cased tokens: each token's pieces between `WORD_BREAK`s; each
 * word's `hashWord` pushed to `hashes`.
 */
function wordsOf(tokens: readonly string[], hashes: number[]): string[] {
  const out: string[] = [];
  for (const token of tokens) {
    let start = 0;
    for (let i = 0; i <= token.length; i++) {
      const c = i < token.length ? token.charCodeAt(i) : 44;
      if (c >= 128 || WORD_BREAK[c] !== 1) continue;
      // Most pieces are too short once stripped, so the cheap test comes first.
      if (i - start >= 2)
        keep(
          stripEdges(start === 0 && i === token.length ? token : token.slice(start, i)),
          out,
          hashes,
        );
      start = i + 1;
    }
  }
  return out;
}

/** Pushes `word` and its hash if it is a content word. */
function keep(word: string, out: string[], hashes: number[]): void {
  if (word.length < 2 || allDigits(word)) return;
  // By hash first: most words are no stopword, and then never hashed as strings too.
  const hash = hashWord(word);
  if (STOPWORD_HASHES.has(hash) && STOPWORDS.has(word)) return;
  out.push(word);
  hashes.push(hash);
}

/** `/^\d+$/.test(word)` for a non-empty word, without a regular expression. */
function allDigits(word: string): boolean {
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** Distinct words a message's list holds before a set replaces it. */
const SCANNED = 64;

/**
 * The {@link MAX_WORDS} rarest words (of equally rare ones, the first), ascending by hash, with
 * their rarities.
 */
function byHash(hashes: number[], values: number[]): { words: Int32Array; weights: Float64Array } {
  let order: number[] | undefined;
  if (hashes.length > MAX_WORDS)
    order = hashes
      .map((_, i) => i)
      .sort((a, b) => (values[b] as number) - (values[a] as number))
      .slice(0, MAX_WORDS);
  const n = order === undefined ? hashes.length : MAX_WORDS;
  const words = new Int32Array(n);
  const weights = new Float64Array(n);
  // Insertion by hash: a few dozen at most, all distinct.
  for (let i = 0; i < n; i++) {
    const at = order === undefined ? i : (order[i] as number);
    const hash = hashes[at] as number;
    let j = i;
    for (; j > 0 && (words[j - 1] as number) > hash; j--) {
      words[j] = words[j - 1] as number;
      weights[j] = weights[j - 1] as number;
    }
    words[j] = hash;
    weights[j] = values[at] as number;
  }
  return { words, weights };
}

/** Reads a message's text once; the linker keeps only the result. */
export function readCues(text: string, rarity: RarityTable): TextCues {
  const lower = text.toLowerCase().trim();
  const tokens = tokensOf(lower);
  const names: string[] = [];
  for (const token of tokens) {
    const platform = token.charCodeAt(0) === 60 ? PLATFORM_MENTION.exec(token) : null;
    if (platform?.[1]) {
      names.push(platform[1]);
      continue;
    }
    const core = stripEdges(token);
    if (core.length > 0) names.push(core);
  }
  const first = tokens[0] ?? "";
  const leading = /^@?([^\s:,]+)[:,]$/.exec(first);
  let flags = 0;
  if (lower.includes("?")) flags |= CUE.question;
  if (QUESTION_WORDS.has(stripEdges(first))) flags |= CUE.questionWord;
  const body = leading ? lower.slice(first.length).trim() : lower;
  if (THANKS.test(body) || THANKS_ANYWHERE.test(body)) flags |= CUE.thanks;
  if (GREETING.test(body)) flags |= CUE.greeting;
  if (ANSWER_START.test(body)) flags |= CUE.answerStart;
  if (URL.test(lower)) flags |= CUE.url;
  if (CODE.test(lower)) flags |= CUE.code;
  if (lower.startsWith("* ")) flags |= CUE.action;
  if (/^[!.]\w/.test(body)) flags |= CUE.command;

  // Each distinct hash once, the first word's: a short list scanned, a set past it.
  const all: number[] = [];
  const found = wordsOf(tokens, all);
  const hashes: number[] = [];
  const values: number[] = [];
  let seen: Set<number> | undefined;
  for (let i = 0; i < found.length; i++) {
    const word = found[i] as string;
    const hash = all[i] as number;
    if (seen === undefined ? hashes.includes(hash) : seen.has(hash)) continue;
    hashes.push(hash);
    // Rarity in sixteenths, 0 to 255, as the shipped model was trained (its table's rarest word,
    // log N, is 195 sixteenths).
    const sixteenths = Math.round(rarity.lookup(word, hash) * 16);
    values.push((sixteenths >= 0 ? Math.min(sixteenths, 255) : 0) / 16);
    if (seen !== undefined) seen.add(hash);
    else if (hashes.length === SCANNED) seen = new Set(hashes);
  }
  const { words, weights } = byHash(hashes, values);
  return {
    words,
    rarity: weights,
    names,
    leadingAddress: leading?.[1] === undefined ? undefined : stripEdges(leading[1]),
    flags,
    length: tokens.length,
  };
}
