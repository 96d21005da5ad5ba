/**
 * The token key of a topic: what two wordings of one topic share once case, punctuation,
 * separators, plurals, common inflections, stop words and word order are set aside. Pure and
 * deterministic; the compound rule depends only on the set of topics it is given, never on
 * their order.
 */

/**
 * Words that say nothing about what was discussed, left out of the key. Kept short on purpose:
 * a word that distinguishes two topics ("error", "setup", "server") must stay.
 */
const TOPIC_STOP_WORDS: ReadonlySet<string> = new Set(
  `a an the and or of for with about my your our their this that these those some any
is are was were be been being how what why when which do does did can could should would
issue issues problem problems trouble troubles question questions help`.split(/\s+/u),
);

/**
 * Words that relate two things in a direction ("linux on windows" is not "windows on linux"):
 * a topic with one keeps its word order in the key, so that order-insensitive matching is used
 * only where it is safe.
 */
const DIRECTIONAL_WORDS: ReadonlySet<string> = new Set(
  "to from on in into onto over under inside within via vs versus than without".split(/\s+/u),
);

/** A word, with the `+` and `#` that make `c++` and `c#` names of their own. */
const WORD = /[\p{L}\p{N}]+[+#]*/gu;
const VOWEL = /[aeiouy]/u;
const DIGIT = /\p{N}/u;

/** The raw words of `topic`: NFKC, lower case, possessive `'s` dropped, split at separators. */
export function topicWords(topic: string): string[] {
  const text = topic
    .normalize("NFKC")
    .toLowerCase()
    .replace(/['’]s\b/gu, "");
  return [...text.matchAll(WORD)].map(([w]) => w);
}

/**
 * A small English stemmer for plurals and the common inflections (`-s`, `-es`, `-ies`, `-ed`,
 * `-ing`), then a final `e` dropped and a final `y` written `i`, so that `configure`,
 * `configured` and `configuring` agree, and `proxy` and `proxies`.
 * Deliberately weaker than Porter's: a stem only needs to be shared by a word's inflections, and
 * never by two different words ("university" and "universe", "news" kept apart from "new" is
 * not attempted). Words with digits, `+` or `#`, and words of three letters or fewer, are kept
 * whole (`dns`, `vms`, `ipv6`, `c++`).
 */
export function stem(word: string): string {
  // To a fixed point, so that a stem is its own stem: `embedded` → `embed` → `emb`, as `embed`.
  for (let w = word; ; ) {
    const next = stemOnce(w);
    if (next === w) return w;
    w = next;
  }
}

function stemOnce(word: string): string {
  if (word.length <= 3 || DIGIT.test(word) || /[+#]/u.test(word)) return word;
  let w = word;
  // Plurals first, so that `speeds` and `settings` go on as `speed` and `setting` do.
  if (w.endsWith("ies") && w.length > 4) w = `${w.slice(0, -3)}i`;
  else if (/(?:ss|sh|ch|x|z)es$/u.test(w)) w = w.slice(0, -2);
  else if (w.endsWith("s") && !/(?:ss|us|is)$/u.test(w)) w = w.slice(0, -1);
  if (w.endsWith("ied") && w.length > 4) w = `${w.slice(0, -3)}i`;
  else if (w.endsWith("ed")) w = unsuffix(w, 2);
  else if (w.endsWith("ing")) w = unsuffix(w, 3);
  if (w.length > 3 && w.endsWith("e") && !w.endsWith("ee")) w = w.slice(0, -1);
  // `proxy`, `proxies` and `cookie`, `cookies` each agree.
  if (w.length > 3 && w.endsWith("y")) w = `${w.slice(0, -1)}i`;
  return w;
}

/** `word` without its `-ed` or `-ing`, undoubled (`logging`), when a real stem remains. */
function unsuffix(word: string, length: number): string {
  const base = word.slice(0, -length);
  if (base.length < 3 || !VOWEL.test(base)) return word;
  const last = base[base.length - 1];
  // `logged` → `log`, but `installed` → `install`: only a doubled consonant after a vowel.
  if (
    last === base[base.length - 2] &&
    !"aeiouslz".includes(last) &&
    VOWEL.test(base[base.length - 3] ?? "")
  ) {
    return base.slice(0, -1);
  }
  return base;
}

/**
 * The stems that occur as one word in any of `topics`: the compounds known to be written as one
 * word (`bootloader`), so that `boot loader` and `boot-loader` join to it.
 */
function topicVocabulary(topics: Iterable<string>): Set<string> {
  const vocabulary = new Set<string>();
  for (const topic of topics) for (const word of topicWords(topic)) vocabulary.add(stem(word));
  return vocabulary;
}

/**
 * The key of `topic` among a channel's topics (`vocabulary`, from `topicVocabulary`): its words
 * with adjacent pairs joined where the joined word is in the vocabulary, stemmed, stop words left
 * out (unless nothing else remains), and sorted unless a directional word makes order matter. Without a vocabulary nothing is joined.
 */
export function topicKey(topic: string, vocabulary: ReadonlySet<string> = new Set()): string {
  const words = joinCompounds(topicWords(topic), vocabulary);
  const directional = words.some((w) => DIRECTIONAL_WORDS.has(w));
  const kept = words.filter((w) => directional || !TOPIC_STOP_WORDS.has(w));
  const stems = (kept.length === 0 ? words : kept).map(stem);
  if (directional) return stems.join(" ");
  // Sorted but not deduplicated: `Neg::neg()` (a method) stays apart from `Neg` (its trait).
  return stems.sort().join(" ");
}

/** Joins adjacent words, left to right, where the joined word's stem is in `vocabulary`. */
function joinCompounds(words: readonly string[], vocabulary: ReadonlySet<string>): string[] {
  if (vocabulary.size === 0) return [...words];
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const next = words[i + 1];
    if (next !== undefined && !DIGIT.test(words[i]) && vocabulary.has(stem(words[i] + next))) {
      out.push(words[i] + next);
      i++;
    } else {
      out.push(words[i]);
    }
  }
  return out;
}

/** The stems of adjacent words of `topic` joined: the compounds it could be written with. */
export function compoundStems(topic: string): Set<string> {
  const words = topicWords(topic);
  const joined = new Set<string>();
  for (let i = 0; i + 1 < words.length; i++) {
    if (!DIGIT.test(words[i])) joined.add(stem(words[i] + words[i + 1]));
  }
  return joined;
}

/**
 * Whether `a` and `b` name the same topic by their tokens: equal keys, either alone or among
 * the two of them (so that `boot loader` meets `bootloader` only where one of them writes it
 * as one word). A function of the pair alone: merging by it is transitive over links, and
 * merging canonical topics again links nothing new.
 */
export function sameTopic(a: string, b: string): boolean {
  if (topicKey(a) === topicKey(b)) return true;
  const vocabulary = topicVocabulary([a, b]);
  return topicKey(a, vocabulary) === topicKey(b, vocabulary);
}
