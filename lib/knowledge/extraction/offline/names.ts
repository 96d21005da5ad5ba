/**
 * Who takes part in a segment: its authors, and the nicknames its messages address (`nick: …`,
 * `@nick`, and `nick, …` for a nick that is an author). None of them is ever a topic.
 */
import type { ExtractionTurn } from "../extractor.js";
import { wordKey } from "./tokens.js";
import { LABELS, STOPWORDS } from "./words.js";

/**
 * The nick a message opens by addressing (`nick: …`, `nick, …`, `@nick …`), lower case, and the
 * text after the address; undefined when it opens with none.
 */
export function addressOf(text: string): { nick: string; rest: string } | undefined {
  const opening = ADDRESSED.exec(text) ?? AT_OPENING.exec(text);
  if (opening === null) return undefined;
  const nick = trimNick(opening[1]);
  return nick === "" ? undefined : { nick, rest: text.slice(opening[0].length).trim() };
}

/** A nickname as IRC, Slack and Discord spell them: no spaces, no separators that end a word. */
const NICK = String.raw`[\p{L}\p{N}_\-\[\]\\^{}|\x60.]{1,40}`;
/** `nick:` or `nick,` opening a message (after an optional `@`). */
const ADDRESSED = new RegExp(String.raw`^\s*@?(${NICK})([:,])(?=\s|$)`, "u");
/** `@nick` opening a message. */
const AT_OPENING = new RegExp(String.raw`^\s*@(${NICK})(?=\s|$)`, "u");
/** `@nick` anywhere. */
const MENTION = new RegExp(String.raw`(?:^|[\s(,;:])@(${NICK})`, "gu");

export interface Participants {
  /** Lower case: every name of the segment, to refuse as a topic or part of one. */
  names: Set<string>;
  /**
   * Lower case: the names sure enough to record for the whole channel (authors, and nicks
   * addressed with a colon or `@`), so that other segments refuse them too.
   */
  channelNames: Set<string>;
}

/** The segment's participants, from its turns' authors and text. */
export function participants(turns: readonly ExtractionTurn[]): Participants {
  const authors = new Set<string>();
  for (const turn of turns) {
    const author = turn.author?.trim().toLowerCase();
    if (author) authors.add(author);
  }
  const names = new Set(authors);
  const channelNames = new Set(authors);
  for (const turn of turns) {
    const opening = ADDRESSED.exec(turn.text);
    if (opening) {
      const nick = trimNick(opening[1]);
      const general = LABELS.has(nick) || STOPWORDS.has(nick);
      if (nick !== "" && opening[2] === ":" && !general) {
        names.add(nick);
        channelNames.add(nick);
      } else if (nick !== "" && opening[2] === "," && !general) {
        // `word, …` opens many a sentence: only an author's name is an address.
        if (authors.has(nick)) names.add(nick);
      }
    }
    for (const mention of turn.text.matchAll(MENTION)) {
      const nick = trimNick(mention[1]);
      if (nick !== "") {
        names.add(nick);
        channelNames.add(nick);
      }
    }
  }
  return { names, channelNames };
}

/** A nick without the sentence's trailing dots, in lower case. */
function trimNick(nick: string): string {
  return nick.replace(/\.+$/u, "").toLowerCase();
}

/**
 * Whether a term of the channel's statistics names one of `names` (display names): holds all of
 * a name's words in a row, after an optional `@`, in either form the extractor writes a name in.
 * An author's name term is `@` and the name in lower case (`@alice zorbington`); a phrase of the
 * text is its words' keys (`alic zorbington`, stemmed). Words are compared apart from the spaces
 * around and between them, so that a name stored as `Alice Zorbington ` still finds its term.
 * Never a part of a name alone (`zorbington`, `@alice`): that may be anyone's.
 */
export function namesTerm(names: readonly string[]): (term: string) => boolean {
  const forms: string[][] = [];
  for (const name of names) {
    const words = name
      .trim()
      .split(/\s+/u)
      .filter((word) => word !== "");
    if (words.length === 0) continue;
    forms.push(
      words.map((word) => word.toLowerCase()),
      words.map(wordKey),
    );
  }
  return (term) => {
    const words = term.replace(/^@/u, "").split(/\s+/u);
    return forms.some((form) => holdsInARow(words, form));
  };
}

function holdsInARow(words: readonly string[], form: readonly string[]): boolean {
  for (let start = 0; start + form.length <= words.length; start++) {
    if (form.every((word, i) => words[start + i] === word)) return true;
  }
  return false;
}
