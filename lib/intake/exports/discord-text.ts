/**
 * What a Discord message shows beyond its `content`, read the same way from the API's message
 * objects (the live poller) and from DiscordChatExporter's JSON: embeds (a bot's or webhook's
 * post is often nothing else) and a forward's copy of the message it quotes. Each block is
 * bounded, like the content Discord bounds, so that a message of ten full embeds does not
 * become 60,000 characters of text; titles and field names are {@link inline}.
 */
import { inline } from "./inline.js";

/** At most this many characters (code points) from one message's embeds, or from one forward. */
const MAX_READ_BLOCK = 4000;

/** `text` cut to `max` characters on a whole character, the cut marked with `…`. */
function bounded(text: string, max = MAX_READ_BLOCK): string {
  if (text.length <= max) return text;
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

const str = (value: unknown): string => (typeof value === "string" ? value.trim() : "");

/**
 * The embeds' titles, descriptions and fields (`name: value`), one per line, bounded; `render`
 * makes a description or a field's value readable as the content is (mentions as `@name`).
 * Footers, authors, images and colours are left out.
 */
export function discordEmbedsText(embeds: unknown, render: (text: string) => string): string {
  if (!Array.isArray(embeds)) return "";
  const lines: string[] = [];
  for (const embed of embeds) {
    if (typeof embed !== "object" || embed === null) continue;
    const { title, description, fields } = embed as Record<string, unknown>;
    const shownTitle = inline(str(title));
    if (shownTitle) lines.push(shownTitle);
    const shownDescription = render(str(description));
    if (shownDescription) lines.push(shownDescription);
    if (!Array.isArray(fields)) continue;
    for (const field of fields) {
      if (typeof field !== "object" || field === null) continue;
      const name = inline(str((field as Record<string, unknown>).name));
      const value = render(str((field as Record<string, unknown>).value));
      if (name || value) lines.push(name && value ? `${name}: ${value}` : name || value);
    }
  }
  return bounded(lines.join("\n"));
}

/** A forward's quoted text as a line of the forwarding message: `[forwarded] …`, bounded. */
export function forwardedText(quoted: string): string {
  return bounded(quoted ? `[forwarded] ${quoted}` : "[forwarded]");
}
