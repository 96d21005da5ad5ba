/**
 * A hit's snippet: its words around the first match, the matched words marked. Pure, without
 * Node or the DOM: the search index and the report page's search box both use it.
 */

/** A snippet: text around the first matched word, and where the matched words are in it. */
export interface Snippet {
  text: string;
  /** `[start, end)` in `text`, in order, not overlapping. */
  marks: [number, number][];
}

const WORD = /[\p{L}\p{N}]+/gu;

/** The English endings the index's stemmer takes off, as this marking approximates them. */
const ENDINGS = ["ing", "ed", "es", "s"];

/**
 * The query's words as prefixes, a common ending taken off, so that `drivers` finds `driver` and
 * `installing` finds `installed`, near what the index's stemmer matched.
 */
function stems(query: string): string[] {
  const words = query.toLowerCase().match(WORD) ?? [];
  const stem = (word: string) => {
    const ending = ENDINGS.find((e) => word.endsWith(e) && word.length - e.length >= 3);
    return ending === undefined ? word : word.slice(0, -ending.length);
  };
  return [...new Set(words.filter((w) => w.length >= 2).map(stem))];
}

/** At most `width` characters of `text` from a little before its first match, the matches marked. */
export function snippet(text: string, query: string, width = 160): Snippet {
  const flat = text.replace(/\s+/g, " ").trim();
  const prefixes = stems(query);
  const found: [number, number][] = [];
  for (const match of flat.matchAll(WORD)) {
    const word = match[0].toLowerCase();
    if (prefixes.some((p) => word.startsWith(p) && (p.length > 2 || word === p)))
      found.push([match.index, match.index + match[0].length]);
  }
  const first = found[0]?.[0] ?? 0;
  let start = Math.max(0, first - Math.floor(width / 3));
  if (start > 0) {
    const space = flat.indexOf(" ", start);
    if (space >= 0 && space < first) start = space + 1;
  }
  let end = Math.min(flat.length, start + width);
  if (end < flat.length) {
    const space = flat.lastIndexOf(" ", end);
    if (space > start && space > first) end = space;
  }
  const lead = start > 0 ? "…" : "";
  const body = flat.slice(start, end);
  const marks = found
    .filter(([s, e]) => s >= start && e <= end)
    .map(([s, e]): [number, number] => [s - start + lead.length, e - start + lead.length]);
  return { text: `${lead}${body}${end < flat.length ? "…" : ""}`, marks };
}
