/**
 * Where a hit opens on the platform it was asked on, made from ids only: Slack's `archives` link
 * (`messagePermalink`), Discord's `channels/<guild>/<channel>/<message>`, Telegram's `t.me` link
 * of a public group (by its name) or of a supergroup's members (`t.me/c/…`). An id that is not
 * of the platform's shape makes no link, so no chat-supplied string enters one.
 */
import { messagePermalink } from "../../history/messages/index.js";

/** What the asking side knows that the stored messages do not: Discord's guild, a group's name. */
export interface LinkPlace {
  platform: "slack" | "discord" | "telegram";
  /** Discord: the guild the command came from. */
  guild?: string;
  /** Telegram: the public group's or channel's `@name`, without the `@`. */
  chatUsername?: string;
}

const SNOWFLAKE = /^\d{15,21}$/;
const TELEGRAM_CHAT = /^-?\d{1,20}$/;
const TELEGRAM_MESSAGE = /^(-?\d{1,20}):(\d{1,12})$/;
const TELEGRAM_USERNAME = /^[A-Za-z][A-Za-z0-9_]{3,31}$/;

/** The link to message `id` of `channel`, or "" when the ids do not make one. */
export function messageLink(place: LinkPlace, channel: string, id: string): string {
  switch (place.platform) {
    case "slack":
      return messagePermalink({ id, channel, platform: "slack" });
    case "discord":
      return place.guild !== undefined &&
        SNOWFLAKE.test(place.guild) &&
        SNOWFLAKE.test(channel) &&
        SNOWFLAKE.test(id)
        ? `https://discord.com/channels/${place.guild}/${channel}/${id}`
        : "";
    case "telegram": {
      const match = TELEGRAM_MESSAGE.exec(id);
      if (match === null || match[1] !== channel || !TELEGRAM_CHAT.test(channel)) return "";
      const name = place.chatUsername;
      if (name !== undefined && TELEGRAM_USERNAME.test(name))
        return `https://t.me/${name}/${match[2]}`;
      // A supergroup's or channel's id is -100 and its own id: members open t.me/c/<own id>/<n>.
      return channel.startsWith("-100") ? `https://t.me/c/${channel.slice(4)}/${match[2]}` : "";
    }
  }
}
