/**
 * A value from the input (a name, a title, a file name) made fit to sit inside a line convoseg
 * composes (`[contact: …]`, `Ana created the topic "…"`): controls, line and paragraph
 * separators and bidi overrides become one space, and the value is cut to a bound, on a whole
 * character, so that it can neither forge a line nor grow the text without limit.
 */

/** C0 and C1 controls (with DEL), line and paragraph separators, bidi embeddings and isolates. */
const UNINLINE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]+/gu;

/** At most this many characters (code points) of one value. */
const MAX_INLINE = 200;

export function inline(value: string, max = MAX_INLINE): string {
  const flat = value.replace(UNINLINE, " ").replace(/ {2,}/g, " ").trim();
  const chars = Array.from(flat);
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join("")}…`;
}
