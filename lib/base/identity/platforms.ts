/**
 * The channel ids of the platforms with connectors, by shape: what tells a Slack channel from a
 * Telegram chat or a Discord channel where nothing else says (a producer's grant, a digest's
 * groups), and which of them are one person's private chat.
 */

export const PLATFORM_CHANNEL_SHAPES = {
  // Public (C), private (G) and direct (D) channels: an upper-case letter and letters or digits.
  slack: /^[CGD][A-Z0-9]{2,}$/,
  // Chat ids: a person's (positive), a group's (negative), a supergroup's or channel's (-100…).
  telegram: /^-?\d{1,16}$/,
  // Snowflakes: 17 digits since 2015, 20 at most for centuries.
  discord: /^\d{17,20}$/,
} as const;

export type ShapedPlatform = keyof typeof PLATFORM_CHANNEL_SHAPES;

/**
 * The shapes of what places a channel for its links, and nothing else enters one: a Discord
 * guild's snowflake, and a public Telegram group's or channel's username (a letter, then letters,
 * digits and `_`, 4 to 32 in all, without the `@`).
 */
export const PLATFORM_PLACE_SHAPES = {
  guild: /^\d{15,21}$/,
  chatUsername: /^[A-Za-z][A-Za-z0-9_]{3,31}$/,
} as const;

/** The message links convoseg makes (`messagePermalink`), by their platform's name. */
const PERMALINK_SHAPES = [
  [
    "Slack",
    /^https:\/\/slack\.com\/archives\/[A-Z0-9]+\/p\d+(\?thread_ts=\d+\.\d+&cid=[A-Z0-9]+)?$/,
  ],
  ["Discord", /^https:\/\/discord\.com\/channels\/\d{15,21}\/\d{15,21}\/\d{15,21}$/],
  ["Telegram", /^https:\/\/t\.me\/(?:[A-Za-z][A-Za-z0-9_]{3,31}|c\/\d{1,20})\/\d{1,12}$/],
] as const;

/**
 * The platform a link is to (`Slack`, `Discord`, `Telegram`) when it has a shape convoseg's
 * message links have (ids, digits and `/.?=&:` only: nothing needs escaping but HTML's `&`);
 * undefined for any other string, so that a link read back from JSON that says anything else
 * never becomes an `href`.
 */
export function permalinkPlatform(
  url: string | undefined,
): "Slack" | "Discord" | "Telegram" | undefined {
  if (url === undefined) return undefined;
  return PERMALINK_SHAPES.find(([, shape]) => shape.test(url))?.[0];
}

/** One person's chat with the app: a Slack DM (`D…`), a Telegram private chat (a positive id). */
const PRIVATE_CHAT = /^(D[A-Z0-9]{2,}|\d{1,16})$/;

/** The platform whose channel ids look like `channel`, or undefined. */
export function channelPlatform(channel: string): ShapedPlatform | undefined {
  for (const [platform, shape] of Object.entries(PLATFORM_CHANNEL_SHAPES)) {
    if (shape.test(channel)) return platform as ShapedPlatform;
  }
  return undefined;
}

/** Whether `channel` is a Slack DM's or a Telegram private chat's id. */
export const isPrivateChat = (channel: string): boolean => PRIVATE_CHAT.test(channel);

/**
 * A channel as people read it: `general (C0GENERAL)`, the name its messages give and the id
 * commands take; the name alone when it is the id, with or without IRC's `#` (`#ubuntu` of
 * `ubuntu`), since it would say the same thing twice; the id alone without a name. Not escaped:
 * each form escapes it.
 */
export function channelLabel(channel: string, name: string | undefined): string {
  if (name === undefined) return channel;
  return name === channel || name === `#${channel}` ? name : `${name} (${channel})`;
}
