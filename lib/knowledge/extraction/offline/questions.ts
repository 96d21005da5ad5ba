/**
 * The offline extractor's questions: found by their form and their position, never by meaning.
 * A question is a person's message (not a bot's, not a system line) whose sentence ends with "?",
 * or a short one that opens with an interrogative or an auxiliary ("how", "does", "anyone", …).
 * It is answered by the later messages of other authors that reply to it (a reply link, or
 * addressing the asker by name), else by the next message of another author within
 * {@link FOLLOW_TURNS} turns when that is not itself a question and addresses no one else;
 * unclear when what follows is
 * only a question or the asker's own words; unanswered when nothing follows.
 */
import { boundQuestion, countTrimmed, cutText, MAX_ANSWER_CHARS } from "../bounds/bounds.js";
import type { ExtractionTurn } from "../extractor.js";
import type { QuestionCandidate, Trimmed } from "../types.js";
import { addressOf } from "./names.js";

/** Questions kept per segment, the first asked: a segment is longer than a window. */
export const MAX_SEGMENT_QUESTIONS = 50;
/** How many turns after a question the next other voice may come and still be its answer. */
export const FOLLOW_TURNS = 3;
/** A question without a question mark is at most this many words. */
const MAX_BARE_WORDS = 20;
/** Words that open a question when a message opens with them. */
const OPENERS = new Set(
  `how what why when where which who whom whose does did can could would should is are was were
  will any anyone anybody someone somebody`
    .split(/\s+/u)
    .filter(Boolean),
);
/**
 * Question words that, unmarked and followed by a subject, open a clause, not a question: "when I
 * run it, it fails", "what I did was…", "how it works".
 */
const CLAUSE_OPENERS = new Set(["when", "what", "where", "how"]);
const SUBJECTS = new Set("i you u we they he she it i'm im you're it's its".split(" "));
/**
 * Modal verbs that, unmarked and followed by "be" or "have", leave out a subject: "should be
 * fine", "should have written /deb".
 */
const MODALS = new Set("should would could will can may might must".split(" "));

/**
 * The questions of a segment's turns (as the extractor is given them), in turn order, at most
 * {@link MAX_SEGMENT_QUESTIONS} (the rest counted in `trimmed.questions`); texts within bounds.
 * Deterministic: the same turns always give the same questions.
 */
export function offlineQuestions(
  turns: readonly ExtractionTurn[],
  trimmed: Trimmed = {},
): QuestionCandidate[] {
  const found: QuestionCandidate[] = [];
  const names = new Set(turns.flatMap((t) => (t.author ? [t.author.toLowerCase()] : [])));
  const segment: Segment = {
    turns,
    names,
    asks: turns.map((turn) => questionText(turn.text, names)),
    at: new Map(turns.map((turn, index) => [turn.id, index])),
  };
  turns.forEach((turn, asked) => {
    const question = turn.kind === "user" ? segment.asks[asked] : undefined;
    if (question !== undefined) found.push({ question, asked, ...answerOf(segment, asked) });
  });
  countTrimmed(trimmed, "questions", found.length - MAX_SEGMENT_QUESTIONS);
  return found.slice(0, MAX_SEGMENT_QUESTIONS).map((q) => boundQuestion(q, trimmed));
}

/** A segment's turns as its questions are read, each computed once. */
interface Segment {
  turns: readonly ExtractionTurn[];
  names: ReadonlySet<string>;
  /** The question each turn's text asks, whoever wrote it (`questionText`). */
  asks: readonly (string | undefined)[];
  /** Each turn's index by its id. */
  at: ReadonlyMap<string | undefined, number>;
}

/** What became of the question of turn `asked`. */
function answerOf(
  { turns, names, asks, at }: Segment,
  asked: number,
): Pick<QuestionCandidate, "status" | "answer" | "answeredBy"> {
  const asker = turns[asked];
  const voice = voiceOf(asker);
  const later = turns
    .map((turn, index) => ({ turn, index }))
    .filter(({ turn, index }) => index > asked && turn.kind !== "system");
  const others = later.filter(({ turn }) => voiceOf(turn) !== voice);
  // Replies: linked to the question, or addressed to the asker by name. Once the asker has asked
  // again, a message addressed to them answers the new question, unless its reply link points
  // between the two: each of four questions in a row was "answered" by the one message after.
  const again =
    later.find(
      ({ turn, index }) =>
        voiceOf(turn) === voice && turn.kind === "user" && asks[index] !== undefined,
    )?.index ?? turns.length;
  const linkedBetween = (turn: ExtractionTurn) => {
    const to = turn.replyTo === undefined ? undefined : at.get(turn.replyTo);
    return to !== undefined && to >= asked && to < again;
  };
  const replies = others.filter(
    ({ turn, index }) =>
      answers(turn, asker) && (index < again || turn.replyTo === undefined || linkedBetween(turn)),
  );
  const statements = replies.filter(({ index }) => asks[index] === undefined);
  if (statements.length > 0) return answered(statements, names);
  // The next few turns, but those that answer another message or address another author.
  const near = later.filter(
    ({ turn, index }) =>
      index <= asked + FOLLOW_TURNS &&
      (turn.replyTo === undefined || turn.replyTo === asker.id) &&
      !addressesAnother(turn, asker, names),
  );
  const next = near.find(({ turn }) => voiceOf(turn) !== voice);
  if (next !== undefined && replies.length === 0 && asks[next.index] === undefined) {
    return answered([next], names);
  }
  return replies.length > 0 || near.length > 0
    ? { status: "unclear", answeredBy: [] }
    : { status: "unanswered", answeredBy: [] };
}

function answered(
  by: readonly { turn: ExtractionTurn; index: number }[],
  names: ReadonlySet<string>,
): Pick<QuestionCandidate, "status" | "answer" | "answeredBy"> {
  const result: Pick<QuestionCandidate, "status" | "answer" | "answeredBy"> = {
    status: "answered",
    answeredBy: by.map(({ index }) => index),
  };
  const answer = firstSentence(withoutAddress(by[0].turn.text, names));
  if (answer !== "") result.answer = cutText(answer, MAX_ANSWER_CHARS);
  return result;
}

/** Whether `turn` replies to the asking turn: by its reply link, or by naming its author first. */
function answers(turn: ExtractionTurn, asker: ExtractionTurn): boolean {
  if (asker.id !== undefined && turn.replyTo === asker.id) return true;
  const address = addressOf(turn.text);
  return asker.author !== undefined && address?.nick === asker.author.toLowerCase();
}

/** Whether `turn` opens by addressing one of the segment's authors other than the asker. */
function addressesAnother(
  turn: ExtractionTurn,
  asker: ExtractionTurn,
  names: ReadonlySet<string>,
): boolean {
  const nick = addressOf(turn.text)?.nick;
  return nick !== undefined && names.has(nick) && nick !== asker.author?.toLowerCase();
}

/** Who speaks: the author, else the role (an imported transcript has no authors). */
function voiceOf(turn: ExtractionTurn): string {
  return turn.author === undefined ? `\0${turn.role}` : turn.author.toLowerCase();
}

/**
 * The question a message asks, shortened to its first sentence that ends with "?" (the whole
 * message when it is a short one opening with a question word), without an opening address;
 * undefined when it asks none, or one of a single word ("what?", "huh?").
 */
function questionText(text: string, names: ReadonlySet<string>): string | undefined {
  const body = withoutAddress(text.trim(), names);
  const marked = sentencesOf(body).find((s) => s.endsWith("?"));
  const words = (s: string) => s.match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu) ?? [];
  if (marked !== undefined) return words(marked).length >= 2 ? marked : undefined;
  // Unmarked, it opens with its word: "*will be issued for" corrects the line before.
  if (!/^\p{L}/u.test(body)) return undefined;
  const all = words(body);
  const opener = all[0]?.toLowerCase();
  if (opener === undefined || !OPENERS.has(opener)) return undefined;
  const second = all[1]?.toLowerCase().replace("’", "'") ?? "";
  // "when I modprobe it I get…", "what a night", "should be fine": said, not asked.
  if (CLAUSE_OPENERS.has(opener) && SUBJECTS.has(second)) return undefined;
  if (opener === "what" && (second === "a" || second === "an")) return undefined;
  if (MODALS.has(opener) && (second === "be" || second === "have")) return undefined;
  return all.length >= 3 && all.length <= MAX_BARE_WORDS ? body : undefined;
}

/** The text without the nick it opens by addressing, when that nick is one of the segment's. */
function withoutAddress(text: string, names: ReadonlySet<string>): string {
  const address = addressOf(text);
  return address !== undefined && names.has(address.nick) ? address.rest : text;
}

/** The first sentence of `text` (its whole, when it has one sentence). */
function firstSentence(text: string): string {
  return sentencesOf(text)[0] ?? "";
}

/**
 * The sentences of `text`, trimmed, none empty: each ends at a run of ".", "!" or "?" followed
 * by a space or the end (a "?" inside a URL or a "." inside a version ends nothing). Linear.
 */
function sentencesOf(text: string): string[] {
  const found: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (!".!?".includes(text[i])) continue;
    let end = i;
    while (end + 1 < text.length && ".!?".includes(text[end + 1])) end++;
    if (end + 1 === text.length || /\s/u.test(text[end + 1])) {
      const sentence = text.slice(start, end + 1).trim();
      if (sentence !== "") found.push(sentence);
      start = end + 1;
    }
    i = end;
  }
  const rest = text.slice(start).trim();
  if (rest !== "") found.push(rest);
  return found;
}
