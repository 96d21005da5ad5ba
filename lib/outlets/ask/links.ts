/**
 * Where a hit opens on the platform it was asked on: `messagePermalink`'s link, the one rule for
 * every surface, with what the asking request knows of the place (Discord's guild, a public
 * Telegram group's name) where the stored message does not say it.
 */
import { messagePermalink } from "../../history/messages/index.js";

/** What the asking side knows of the place: its platform, Discord's guild, a group's name. */
export interface LinkPlace {
  platform: "slack" | "discord" | "telegram";
  /** Discord: the guild the command came from. */
  guild?: string;
  /** Telegram: the public group's or channel's `@name`, without the `@`. */
  chatUsername?: string;
}

/** The link to message `id` of `channel` in `place`, or "" when the ids do not make one. */
export function messageLink(place: LinkPlace, channel: string, id: string): string {
  return messagePermalink({ id, channel, ...place });
}
