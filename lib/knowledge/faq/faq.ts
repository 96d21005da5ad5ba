/**
 * A channel's questions grouped into FAQ entries: questions asked again in other words are linked
 * by matchers (`questionMatcher` by their words; the topics' `embeddingMatcher` can join it) and
 * merged over links (connected components), so the entries depend on the set of questions only,
 * never on their order.
 */
import type { TopicMatcher } from "../topics/index.js";
import {
  channelStems,
  DEFAULT_QUESTION_SIMILARITY,
  questionStems,
  sameStems,
  tellsWhatItAsks,
} from "./key.js";

/** One asking of a question, as the question index holds it (only what grouping reads). */
export interface FaqQuestion {
  /** In the asker's words, shortened. */
  question: string;
  /** The asking message. */
  askedId: string;
  /** Epoch ms. */
  askedTs: number;
  /**
   * Who asked, when known: a question recurs when people ask it, not when one person asks again.
   * An asking without one counts as one person of its own.
   */
  askedBy?: string;
  /** Summarized; absent when there is none. */
  answer?: string;
  /** The answering messages. */
  answerIds: readonly string[];
  /** Whether a person set this answer (a correction wins over the model's). */
  corrected?: boolean;
}

/**
 * The answer an entry gives: a corrected one first, else one that says something, then the most
 * supported.
 */
interface FaqAnswer {
  text: string;
  /** The asking message of the question it answered. */
  askedId: string;
  answerIds: string[];
  corrected: boolean;
}

/** Questions that ask one thing, as one. */
export interface FaqEntry {
  /** Its clearest wording: of the most common form, one worded as a question, the shortest. */
  question: string;
  /** How many times it was asked. */
  count: number;
  /** By how many people (an asking of no known author counts as one of its own). */
  people: number;
  /** How many of those were answered. */
  answered: number;
  /** Epoch ms of its first and last asking. */
  firstAsked: number;
  lastAsked: number;
  answer?: FaqAnswer;
  /** Its other distinct wordings, most asked first, at most `maxEvidence`. */
  wordings: string[];
  /** Evidence: the asking messages, latest first, at most `maxEvidence`. */
  askedIds: string[];
  /** The asking messages left out of `askedIds`. */
  moreAsked: number;
}

/** How many wordings and asking messages an entry lists when not told. */
const DEFAULT_MAX_EVIDENCE = 10;

/** A wording that reads as a question: it begins with a question word. */
const ASKING =
  /^\s*(?:how|what|why|where|which|who|when|is|are|can|could|does|do|should|will|would)\b/iu;

const byCode = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Links questions that `sameStems` says ask one thing at `threshold`, a function of each pair
 * alone, the words of `channel`'s name left out of both (`channelStems`). Not every pair is
 * compared: two stem sets of Jaccard similarity at least `threshold` share one of the rarest
 * `n - ceil(threshold × n) + 1` stems of each (prefix filtering), so only questions sharing one
 * of those are, and a stem most questions carry (`ubuntu`) costs little.
 */
export function questionMatcher(
  threshold: number = DEFAULT_QUESTION_SIMILARITY,
  channel?: string,
): TopicMatcher {
  const general = channelStems(channel);
  return function* (questions) {
    const stems = questions.map((q) => questionStems(q).filter((s) => !general.has(s)));
    const frequency = new Map<string, number>();
    for (const words of stems) for (const w of words) frequency.set(w, (frequency.get(w) ?? 0) + 1);
    const rarest = (a: string, b: string) =>
      (frequency.get(a) ?? 0) - (frequency.get(b) ?? 0) || byCode(a, b);
    // The epsilon keeps 0.65 × 20 (13.000000000000002) from lengthening the required overlap.
    const prefixes = stems.map((words) =>
      [...words]
        .sort(rarest)
        .slice(0, words.length - Math.ceil(threshold * words.length - 1e-9) + 1),
    );
    const holders = new Map<string, number[]>();
    for (const [i, prefix] of prefixes.entries()) {
      for (const word of prefix) {
        const list = holders.get(word);
        if (list === undefined) holders.set(word, [i]);
        else list.push(i);
      }
    }
    for (const [i, prefix] of prefixes.entries()) {
      const seen = new Set<number>();
      for (const word of prefix) {
        for (const j of holders.get(word) ?? []) {
          if (j <= i || seen.has(j)) continue;
          seen.add(j);
          if (sameStems(stems[i], stems[j], threshold)) yield [questions[i], questions[j]];
        }
      }
    }
  };
}

/** Oldest first, then by message id, wording and answer: a total order on what an asking says. */
function compareAsked(a: FaqQuestion, b: FaqQuestion): number {
  return (
    a.askedTs - b.askedTs ||
    byCode(a.askedId, b.askedId) ||
    byCode(a.question, b.question) ||
    byCode(a.answer ?? "", b.answer ?? "") ||
    byCode(a.answerIds.join("\n"), b.answerIds.join("\n"))
  );
}

/**
 * A corrected answer first, then one that says something, then the most answering messages, then
 * the latest asked.
 */
function compareAnswers(a: FaqQuestion, b: FaqQuestion): number {
  return (
    Number(b.corrected ?? false) - Number(a.corrected ?? false) ||
    Number(saysSomething(b.answer)) - Number(saysSomething(a.answer)) ||
    new Set(b.answerIds).size - new Set(a.answerIds).size ||
    b.askedTs - a.askedTs ||
    compareAsked(a, b)
  );
}

/**
 * Whether an answer holds two content words or more: "yes", "no", "ahh" or "thanks" answer the
 * asker, and tell a reader of the FAQ nothing.
 */
function saysSomething(answer: string | undefined): boolean {
  return answer !== undefined && questionStems(answer).length >= 2;
}

/**
 * Groups `questions` into FAQ entries: every question lands in exactly one group, the same one
 * whatever their order, but one whose words say nothing of what it asks ("can someone help me?",
 * "does not work?", `tellsWhatItAsks`), which is in none; groups asked by fewer than `minCount`
 * people (default 2) are left out: one person asking again is no recurring question. An
 * entry is worded by its most common form (`questionStems`): that form's shortest wording that
 * begins with a question word, else its shortest; its answer is a corrected one, else one that
 * says something (`saysSomething`), then the one with the most answering messages, else the latest.
 * Ordered by most people first, then most asked, then the latest asked, then by wording.
 */
export function groupQuestions(
  questions: readonly FaqQuestion[],
  options: {
    matchers?: readonly TopicMatcher[];
    minCount?: number;
    maxEvidence?: number;
    /** The channel's name, whose words join no two questions (default `questionMatcher`'s). */
    channel?: string;
  } = {},
): FaqEntry[] {
  const matchers = options.matchers ?? [
    questionMatcher(DEFAULT_QUESTION_SIMILARITY, options.channel),
  ];
  const maxEvidence = options.maxEvidence ?? DEFAULT_MAX_EVIDENCE;
  // "Can someone help me?" asks nothing its words can tell: however often it is said, it is no
  // recurring question, so it is in no entry.
  const telling = questions.filter((q) => tellsWhatItAsks(questionStems(q.question)));
  const texts = [...new Set(telling.map((q) => q.question))].sort(byCode);
  const parent = new Map(texts.map((t) => [t, t]));
  const root = (text: string): string => {
    let r = text;
    while (parent.get(r) !== r) r = parent.get(r) as string;
    parent.set(text, r);
    return r;
  };
  for (const matcher of matchers) {
    for (const [a, b] of matcher(texts)) {
      if (!parent.has(a) || !parent.has(b)) continue;
      const [ra, rb] = [root(a), root(b)];
      // The smaller text roots the component: union by text keeps it order-independent.
      if (ra !== rb) byCode(ra, rb) < 0 ? parent.set(rb, ra) : parent.set(ra, rb);
    }
  }
  const groups = new Map<string, FaqQuestion[]>();
  for (const q of telling) {
    const r = root(q.question);
    const group = groups.get(r);
    if (group === undefined) groups.set(r, [q]);
    else group.push(q);
  }
  const entries: FaqEntry[] = [];
  for (const members of groups.values()) {
    if (peopleOf(members) < (options.minCount ?? 2)) continue;
    members.sort(compareAsked);
    entries.push(entryOf(members, maxEvidence));
  }
  return entries.sort(
    (a, b) =>
      b.people - a.people ||
      b.count - a.count ||
      b.lastAsked - a.lastAsked ||
      byCode(a.question, b.question),
  );
}

/** How many people asked `members`: their distinct authors, an unknown one each its own. */
function peopleOf(members: readonly FaqQuestion[]): number {
  return new Set(members.map((q) => (q.askedBy === undefined ? `\0${q.askedId}` : q.askedBy))).size;
}

/** The entry of one group's `members`, oldest asked first. */
function entryOf(members: readonly FaqQuestion[], maxEvidence: number): FaqEntry {
  const asked = new Map<string, number>();
  for (const q of members) asked.set(q.question, (asked.get(q.question) ?? 0) + 1);
  const formOfText = new Map([...asked.keys()].map((t) => [t, questionStems(t).join(" ")]));
  const forms = new Map<string, number>();
  for (const [text, n] of asked) {
    const form = formOfText.get(text) as string;
    forms.set(form, (forms.get(form) ?? 0) + n);
  }
  const formOf = (text: string) => forms.get(formOfText.get(text) as string) ?? 0;
  const wordings = [...asked.keys()].sort(
    (a, b) =>
      formOf(b) - formOf(a) ||
      Number(ASKING.test(b)) - Number(ASKING.test(a)) ||
      a.length - b.length ||
      byCode(a, b),
  );
  const [question] = wordings;
  const others = wordings
    .slice(1)
    .sort((a, b) => (asked.get(b) ?? 0) - (asked.get(a) ?? 0) || byCode(a, b));
  const answers = members.filter((q) => q.answer !== undefined).sort(compareAnswers);
  const best = answers[0];
  const latestFirst = members.map((q) => q.askedId).reverse();
  return {
    question,
    count: members.length,
    people: peopleOf(members),
    answered: answers.length,
    firstAsked: members[0].askedTs,
    lastAsked: members[members.length - 1].askedTs,
    ...(best !== undefined && {
      answer: {
        text: best.answer as string,
        askedId: best.askedId,
        answerIds: [...best.answerIds],
        corrected: best.corrected ?? false,
      },
    }),
    wordings: others.slice(0, maxEvidence),
    askedIds: latestFirst.slice(0, maxEvidence),
    moreAsked: Math.max(0, latestFirst.length - maxEvidence),
  };
}
