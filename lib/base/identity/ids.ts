/**
 * The rules that make a string a usable conversation or message id. Validators return a problem
 * description (or undefined) rather than throw, so that each module reports it in its own error
 * family.
 */

/**
 * Unicode whitespace as Go's `unicode.IsSpace` (and so `strings.TrimSpace`) defines it, which the
 * original rules use. JavaScript's `\s` differs: it includes U+FEFF and lacks U+0085.
 */
const LEADING_OR_TRAILING_SPACE =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/;
/** C0 controls, DEL and C1 controls: Go's `unicode.IsControl`. */
const CONTROL = /\p{Cc}/u;

/**
 * The longest conversation (channel) id, in UTF-8 bytes: DynamoDB's sort-key limit, as the
 * messages table's conversations index sorts by it ("Size limit exceeded", naming no attribute).
 */
export const MAX_CONVERSATION_ID_BYTES = 1024;
/** The longest platform message id, in UTF-8 bytes: its sort key `m#<id>` must fit the limit. */
export const MAX_MESSAGE_ID_BYTES = MAX_CONVERSATION_ID_BYTES - 2;

/**
 * Why `value` cannot be a conversation (channel) id, or undefined when it can. The rules, in the
 * order they are checked: not empty; well-formed UTF-16 (a lone surrogate is the port of "invalid
 * UTF-8": it cannot be stored as UTF-8, and two ids differing only there would collapse into
 * one); no leading or trailing whitespace; no control character anywhere.
 */
export function conversationIdProblem(value: unknown): string | undefined {
  if (typeof value !== "string" || value === "") return "empty";
  if (!value.isWellFormed()) return "invalid UTF-16";
  if (LEADING_OR_TRAILING_SPACE.test(value)) return "leading or trailing whitespace";
  const control = CONTROL.exec(value);
  if (control) return `contains control character ${codePoint(control[0])}`;
  return undefined;
}

/**
 * Why `value` cannot be a platform message id, or undefined when it can: a non-empty string of
 * well-formed UTF-16. A lone surrogate cannot be stored as UTF-8: ids differing only there would
 * be stored as one.
 */
export function messageIdProblem(value: string): string | undefined {
  if (value === "") return "empty";
  if (!value.isWellFormed())
    return `invalid UTF-16 (lone surrogate at index ${loneSurrogateAt(value)})`;
  return undefined;
}

/** The UTF-16 index of the first lone surrogate of `text`, or -1 when it is well formed. */
export function loneSurrogateAt(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      else return i;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      return i;
    }
  }
  return -1;
}

/** `U+000A` style name of the character at the start of `text`. */
function codePoint(text: string): string {
  return `U+${(text.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
}
