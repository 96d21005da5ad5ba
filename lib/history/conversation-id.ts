import { InvalidConversationIdError } from "./errors.js";

/**
 * Identifies one history partition: for chat ingestion, a channel. Any string that passes
 * {@link validateConversationId}; there is no length limit and no character set beyond its rules.
 */
export type ConversationId = string;

/**
 * Unicode whitespace as Go's `unicode.IsSpace` (and so `strings.TrimSpace`) defines it, which the
 * original rules use. JavaScript's `\s` differs: it includes U+FEFF and lacks U+0085.
 */
const LEADING_OR_TRAILING_SPACE =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/;
/** C0 controls, DEL and C1 controls: Go's `unicode.IsControl`. */
const CONTROL = /\p{Cc}/u;

/**
 * Checks the rules in order and throws an {@link InvalidConversationIdError} for the first one
 * broken: empty; not well-formed UTF-16 (a lone surrogate: the port of "invalid UTF-8");
 * leading or trailing whitespace; a control character anywhere.
 */
export function validateConversationId(value: unknown): asserts value is ConversationId {
  if (typeof value !== "string" || value === "") throw new InvalidConversationIdError("empty");
  if (!value.isWellFormed()) throw new InvalidConversationIdError("invalid UTF-16");
  if (LEADING_OR_TRAILING_SPACE.test(value)) {
    throw new InvalidConversationIdError("leading or trailing whitespace");
  }
  const control = CONTROL.exec(value);
  if (control) {
    const code = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
    throw new InvalidConversationIdError(`contains control character U+${code}`);
  }
}

/** `value` as a conversation id, after validation. */
export function newConversationId(value: string): ConversationId {
  validateConversationId(value);
  return value;
}
