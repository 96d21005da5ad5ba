/**
 * A question as search words. Chat text is hostile: the words are letters, digits and the few
 * marks a technical word carries (`apt-get`, `/var/cache`, `c++`), never markup, mentions or
 * query syntax, and the search takes them as one match query anyway.
 */

/** The most characters of words one question searches with (the search takes at most 500). */
const MAX_ASK_CHARS = 300;

/**
 * The words of `text` (a slash command's text, a mention's, an option's value): Slack's `<…>`
 * markup reduced to its label, everything but word characters and `. / + - _ #` as spaces, cut
 * at {@link MAX_ASK_CHARS} on a word. "" when nothing is left to look for.
 */
export function askWords(text: string): string {
  const words = text
    // Slack's links, mentions and channel names: `<url|label>` reads as its label; `<@U1>` goes.
    .replace(/<[^<>|]*\|([^<>]*)>/g, " $1 ")
    .replace(/<[^<>]*>/g, " ")
    .replace(/[^\p{L}\p{N}./+_#-]+/gu, " ")
    // A mark alone, or at a word's edge, is no word.
    .split(" ")
    .map((w) => w.replace(/^[./+_#-]+(?=[\p{L}\p{N}/])/u, (m) => (m.startsWith("/") ? m : "")))
    .map((w) => w.replace(/[.+_#-]+$/u, (m) => (m.startsWith("+") ? m : "")))
    .filter((w) => /[\p{L}\p{N}]/u.test(w))
    .join(" ");
  if (words.length <= MAX_ASK_CHARS) return words;
  const cut = words.slice(0, MAX_ASK_CHARS + 1);
  const space = cut.lastIndexOf(" ");
  return space > 0 ? cut.slice(0, space) : cut.slice(0, MAX_ASK_CHARS);
}
