/**
 * Chat text made safe to print in a digest: control characters, bidirectional overrides and
 * zero-width characters removed, line breaks and runs of spaces made one space, and then escaped
 * for the form it goes into. Chat text never becomes markup, a link or a mention.
 */
import { channelLabel, permalinkPlatform } from "../../base/identity/index.js";
import type { Digest } from "./types.js";

/** C0 and C1 controls, bidi embeddings/overrides/isolates, zero-width and BOM characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]+/g;

/** `text` on one line, without what a terminal or a renderer could act on. */
export function plainText(text: string): string {
  return text.replace(UNPRINTABLE, " ").replace(/\s+/g, " ").trim();
}

/** What opens markup anywhere in a line, and what autolinks or mentions: `:` (`http://`, `:emoji:`), `@`. */
const INLINE_MARKUP = /[\\`*_[\]<>|~&@:]/g;

/**
 * `text` as literal Markdown (CommonMark and GitHub's flavour, Slack's mrkdwn where it
 * overlaps): what opens emphasis, code, a link, an image, an HTML tag, an entity, a table cell,
 * strikethrough, an autolink or a mention is backslash-escaped anywhere, and what opens a block
 * (a heading, a list item, a quote) where the text begins. The rest stays as written, so that
 * `docs.rs` and `(862)` read as themselves: with `[` and `]` escaped no `(` can end a link.
 */
export function markdownText(text: string): string {
  return plainText(text)
    .replace(INLINE_MARKUP, (c) => `\\${c}`)
    .replace(/\b(www)\./gi, "$1\\.")
    .replace(/^(\d+)([.)])|^[#+\-=!]/, (m, digits?: string, mark?: string) =>
      digits === undefined ? `\\${m}` : `${digits}\\${mark}`,
    );
}

/** `text` as HTML text or a quoted attribute value. */
export function htmlText(text: string): string {
  return plainText(text).replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c,
  );
}

/**
 * A link target as it may stand in Markdown `(…)` or an HTML attribute: relative, `#…` or
 * http(s) only (anything else, `javascript:` say, is no link: undefined), with spaces, quotes,
 * brackets and parentheses percent-encoded.
 */
export function safeHref(href: string): string | undefined {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(href);
  if (scheme !== null && !/^https?$/i.test(scheme[1])) return undefined;
  return href.replace(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: a control in a link is encoded
    /[\u0000-\u0020\u007f"'<>()\\`[\]]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`,
  );
}

/**
 * An entry's permalink as a form may link it: only an https link to Slack, Discord or Telegram of
 * a shape `messagePermalink` makes (a digest read back from JSON could say anything); else
 * undefined. Of ids, digits and `/.?=&:` only: nothing in it needs escaping but HTML's `&`.
 */
export const safePermalink = (url: string | undefined): string | undefined =>
  permalinkPlatform(url) === undefined ? undefined : url;

/** What a {@link safePermalink} says, in every form: `open in Slack`, `open in Discord`. */
export const permalinkLabel = (url: string): string =>
  `open in ${permalinkPlatform(url) ?? "the chat"}`;

/** `2026-01-31 08:05` (UTC). */
export const minute = (ms: number): string =>
  new Date(ms).toISOString().slice(0, 16).replace("T", " ");

/** `2026-01-31` (UTC). */
export const utcDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** `1,200`: a count as people read it. */
export const thousands = (n: number): string => n.toLocaleString("en-US");

/** A channel as the digest names it: {@link channelLabel} with the digest's `names`. */
export const digestChannel = (digest: Pick<Digest, "names">, channel: string): string =>
  channelLabel(channel, digest.names?.[channel]);

/** `1 conversation`, `1,200 conversations`. */
export const counted = (n: number, what: string): string =>
  `${thousands(n)} ${what}${n === 1 ? "" : "s"}`;
