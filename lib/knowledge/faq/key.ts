/**
 * When two questions ask the same thing by their words: each question's content stems (the
 * topic key's stemmer, a question's stop words left out, a few synonyms and negations written one
 * way), compared as sets. Pure and deterministic, a function of the pair alone.
 */
import { stem } from "../topics/index.js";

/**
 * Words that say nothing about what is asked: function words, the asking itself ("how do I",
 * "does anyone know") and chat fluff. A word that tells two questions apart stays.
 */
const QUESTION_STOP_WORDS: ReadonlySet<string> = new Set(
  `a an the and or of for with about my your our their this that these those some any it its
is are was were be been being am how what why when which who whom where whats hows do does did
done doing can could should would will shall may might must i me im ive id you u he she we they
them there here to in on at by from into onto up out as so if then than just also still really
actually anyone someone somebody anybody everyone know knows knew please help need needs want
wanted wanna trying try tried way ways get gets getting got thing something anything guys hi
hello hey thanks thank thx possible able use using used properly correctly anymore ever again
now yet like else one other tell there's mean exactly currently suddenly always sometimes all
idea ideas advice best good proper right correct easiest easy simple simply go going have has
had having but say said says think look ok okay sure oh ah hmm yeah yes around`.split(/\s+/u),
);

/** Stems (after `stem`) written one way: synonyms a chat uses for one thing. */
const SYNONYMS: ReadonlyMap<string, string> = new Map<string, string>([
  ["wireless", "wifi"],
  ["wlan", "wifi"],
  ["uninstall", "remov"],
  ["purg", "remov"],
  ["delet", "remov"],
  ["restart", "reboot"],
  ["sleep", "suspend"],
  ["folder", "dir"],
  ["directori", "dir"],
  ["pc", "computer"],
  ["machin", "computer"],
  ["launch", "start"],
  ["configur", "config"],
  ["set", "config"],
  ["fail", "neg"],
  ["broken", "neg"],
  ["brok", "neg"],
  ["not", "neg"],
  ["no", "neg"],
  ["cannot", "neg"],
  ["unabl", "neg"],
  ["crash", "neg"],
  ["freez", "hang"],
  ["frozen", "hang"],
  ["stuck", "hang"],
  ["laggi", "slow"],
  ["passwd", "password"],
  ["disk", "drive"],
  ["disc", "drive"],
  ["hdd", "drive"],
  ["ssd", "drive"],
  ["video", "graphic"],
  ["gpu", "graphic"],
  ["audio", "sound"],
  ["internet", "network"],
  ["net", "network"],
  ["displai", "screen"],
  ["monitor", "screen"],
  ["show", "list"],
  ["view", "list"],
  ["see", "list"],
  ["check", "list"],
  ["mak", "creat"],
  ["forgotten", "forgot"],
  ["newer", "latest"],
  ["newest", "latest"],
  ["recent", "latest"],
]);

/** Stems that, found on the two sides of a pair, make two questions different whatever else they share. */
const OPPOSITES: readonly (readonly [string, string])[] = [
  ["install", "remov"],
  ["enabl", "disabl"],
  ["mount", "unmount"],
  ["upgrad", "downgrad"],
  ["start", "stop"],
  ["encrypt", "decrypt"],
  ["lock", "unlock"],
  ["connect", "disconnect"],
  ["increa", "decrea"],
  ["add", "remov"],
  ["hid", "list"],
  ["import", "export"],
  ["upload", "download"],
  ["zip", "unzip"],
  ["compress", "extract"],
  ["login", "logout"],
];
const OPPOSITE: ReadonlyMap<string, readonly string[]> = (() => {
  const map = new Map<string, string[]>();
  for (const [a, b] of OPPOSITES) {
    map.set(a, [...(map.get(a) ?? []), b]);
    map.set(b, [...(map.get(b) ?? []), a]);
  }
  return map;
})();

/** Contractions written out, so that `doesn't`, `does not` and `can't` all say `not`. */
const CONTRACTIONS: readonly (readonly [RegExp, string])[] = [
  [/\bcan['’]?t\b/gu, "can not"],
  [/\bwon['’]t\b/gu, "will not"],
  [/n['’]t\b/gu, " not"],
  [/\bwi-fi\b/gu, "wifi"],
  [/\bset\s*-?\s*up\b/gu, "configure"],
  [/\bget rid of\b/gu, "remove"],
  [/\busb (?:stick|key|thumb ?drive|flash ?drive|pen ?drive)\b/gu, "usb"],
  [/\bstop(?:s|ped)? working\b/gu, "not"],
  [/\bturn(?:s|ed|ing)? off\b/gu, "disable"],
  [/\bturn(?:s|ed|ing)? on\b/gu, "enable"],
];

/** A word: letters and digits, a version's dots kept (`22.04`), with `+` and `#` (`c++`). */
const WORD = /[\p{L}\p{N}]+(?:\.\p{N}+)*[+#]*/gu;
const DIGIT = /\p{N}/u;

/**
 * What a question asks to do: two questions that ask different ones of these about the same
 * thing ("connect to" and "share" a network) are different questions.
 */
const ACTIONS: ReadonlySet<string> = new Set(
  `install remove enable disable mount unmount upgrade downgrade start stop encrypt decrypt lock
unlock connect disconnect share add find list fix reset recover resize format kill copy move
import export upload download zip unzip compress extract login logout reboot update create
configure switch record close open run edit hide change`
    .split(/\s+/u)
    .map(questionStem),
);

/**
 * Stems that alone say nothing of what is asked: a question of these only ("does not work?",
 * "how fix?", "what's the error?", "any suggestions?") asks about something said before it, and
 * is no question a channel keeps asking, however often its words recur.
 */
const VAGUE: ReadonlySet<string> = new Set([
  ...`not work fix problem issue error wrong happen suggestion solution tip reason mean question ask`
    .split(/\s+/u)
    .map(questionStem),
  ...["?what", "?how", "?why", "?where"],
]);

/**
 * Whether a question's stems (`questionStems`) say what it asks: one of them is no vague one, no
 * action alone ("how do I install it?" asks of something said before) and no single letter.
 */
export function tellsWhatItAsks(stems: readonly string[]): boolean {
  return stems.some((s) => !VAGUE.has(s) && !ACTIONS.has(s) && s.length > 1);
}

/**
 * The content stems of `question`: NFKC, lower case, contractions written out, stop words left
 * out, stemmed, synonyms written one way; `work` dropped where a negation says it does not. A
 * set, in code order.
 */
export function questionStems(question: string): string[] {
  let text = question
    .normalize("NFKC")
    .toLowerCase()
    .replace(/['’]s\b/gu, "");
  for (const [pattern, replacement] of CONTRACTIONS) text = text.replace(pattern, replacement);
  const stems = new Set<string>();
  for (const [word] of text.matchAll(WORD)) {
    if (QUESTION_STOP_WORDS.has(word)) continue;
    stems.add(questionStem(word));
  }
  if (stems.has("neg")) stems.delete("work");
  // One content word leaves the asking as the question: "what's ubuntu?" is not "how do I get
  // ubuntu?", so its kind (what, how, where, why) stays as a stem of its own.
  if (stems.size === 1) {
    const kind = ASKED_KIND.exec(text)?.[1];
    if (kind !== undefined) stems.add(`?${kind === "which" ? "what" : kind}`);
  }
  return [...stems].sort();
}

/** The question word a question starts with, where it says what kind of answer is wanted. */
const ASKED_KIND = /^\W*(what|which|how|where|why)\b/u;

/**
 * `stem`, `-ly` and `-ation` left out, a synonym written one way, then `-ate` left out: so that
 * `hibernate` and `hibernation` agree, `configure` and `configuration`, `random` and `randomly`.
 */
function questionStem(word: string): string {
  const base = word.length >= 8 && word.endsWith("ation") ? word.slice(0, -5) : word;
  let s = stem(base);
  if (s.length >= 6 && s.endsWith("li")) s = stem(s.slice(0, -2));
  s = SYNONYMS.get(s) ?? SYNONYMS.get(word) ?? s;
  return s.length >= 5 && s.endsWith("at") && !DIGIT.test(s) ? s.slice(0, -2) : s;
}

/** The Jaccard similarity at or above which two questions' stems say they are one when not told. */
export const DEFAULT_QUESTION_SIMILARITY = 0.65;

/**
 * The stems of a channel's name (its words of three letters or more): what every question there is
 * about, so that it joins none of them to another (`questionMatcher`). In #ubuntu "how do I install
 * xp on ubuntu?" and "install lisp on my ubuntu?" share "install" only.
 */
export function channelStems(channel: string | undefined): ReadonlySet<string> {
  const words = (channel ?? "").toLowerCase().match(/\p{L}{3,}/gu) ?? [];
  return new Set(words.map(questionStem));
}

/**
 * Whether two questions' stem sets (`questionStems`) ask the same thing: no opposite stems on the
 * two sides, no two different version numbers, and a Jaccard similarity of at least `threshold`.
 */
export function sameStems(
  a: readonly string[],
  b: readonly string[],
  threshold: number = DEFAULT_QUESTION_SIMILARITY,
): boolean {
  if (a.length === 0 || b.length === 0) return false;
  const inB = new Set(b);
  const inA = new Set(a);
  const onlyA = a.filter((s) => !inB.has(s));
  const onlyB = b.filter((s) => !inA.has(s));
  const shared = a.length - onlyA.length;
  if (shared / (a.length + onlyB.length) < threshold) return false;
  if (onlyA.some((s) => DIGIT.test(s)) && onlyB.some((s) => DIGIT.test(s))) return false;
  // Two different actions, or an action asked of something the other question does nothing to.
  const actionA = onlyA.some((s) => ACTIONS.has(s));
  const actionB = onlyB.some((s) => ACTIONS.has(s));
  if (actionA && (actionB || !b.some((s) => ACTIONS.has(s)))) return false;
  if (actionB && !a.some((s) => ACTIONS.has(s))) return false;
  const oppositeOfB = new Set(onlyB.flatMap((s) => OPPOSITE.get(s) ?? []));
  return !onlyA.some((s) => oppositeOfB.has(s));
}

/** Whether questions `a` and `b` ask the same thing by their words (see {@link sameStems}). */
export function sameQuestion(
  a: string,
  b: string,
  threshold: number = DEFAULT_QUESTION_SIMILARITY,
): boolean {
  return sameStems(questionStems(a), questionStems(b), threshold);
}
