/** The platform's own link to a chat message, made from its ids and the fields that place it. */

import { PLATFORM_PLACE_SHAPES } from "../../base/identity/index.js";
import type { ChatMessage } from "./chat-message.js";

/** A Slack message id: its `ts`, seconds and microseconds. */
const SLACK_TS = /^\d+\.\d+$/;
/** A Slack channel id: upper-case letters and digits only, so nothing else can enter the link. */
const SLACK_CHANNEL = /^[A-Z0-9]+$/;
const SNOWFLAKE = PLATFORM_PLACE_SHAPES.guild;
const TELEGRAM_USERNAME = PLATFORM_PLACE_SHAPES.chatUsername;
/** A Telegram chat id, and a message id as convoseg stores it: `<chat>:<n>`. */
const TELEGRAM_CHAT = /^-?\d{1,20}$/;
const TELEGRAM_MESSAGE = /^(-?\d{1,20}):(\d{1,12})$/;

/** What a link is made of: the message's ids, its platform and thread, its guild or group name. */
export type PermalinkSource = Pick<
  ChatMessage,
  "id" | "channel" | "platform" | "thread" | "guild" | "chatUsername"
>;

/**
 * The platform's own link to a message, else "": Slack's `archives` link (a message id is its
 * `ts`; a thread reply names its thread); Discord's `channels/<guild>/<channel>/<message>` (none
 * without its `guild`: a direct message's would need to be known as one); Telegram's
 * `t.me/<chatUsername>/<n>` for a public group or channel, else `t.me/c/<id>/<n>` for a
 * supergroup's or channel's members (its id is -100 and its own), and none for a basic group or
 * a private chat. Made only of ids and names that match the platform's shapes, so no
 * chat-supplied string reaches it as written.
 */
export function messagePermalink(message: PermalinkSource): string {
  switch (message.platform) {
    case "slack":
      return slackLink(message);
    case "discord": {
      const { guild, channel, id } = message;
      return guild !== undefined &&
        SNOWFLAKE.test(guild) &&
        SNOWFLAKE.test(channel) &&
        SNOWFLAKE.test(id)
        ? `https://discord.com/channels/${guild}/${channel}/${id}`
        : "";
    }
    case "telegram":
      return telegramLink(message);
    default:
      return "";
  }
}

function slackLink(message: PermalinkSource): string {
  if (!SLACK_TS.test(message.id) || !SLACK_CHANNEL.test(message.channel)) return "";
  const base = `https://slack.com/archives/${message.channel}/p${message.id.replace(".", "")}`;
  const thread = message.thread;
  return thread !== undefined && thread !== message.id && SLACK_TS.test(thread)
    ? `${base}?thread_ts=${thread}&cid=${message.channel}`
    : base;
}

function telegramLink({ id, channel, chatUsername }: PermalinkSource): string {
  const match = TELEGRAM_MESSAGE.exec(id);
  if (match === null || match[1] !== channel || !TELEGRAM_CHAT.test(channel)) return "";
  if (chatUsername !== undefined && TELEGRAM_USERNAME.test(chatUsername))
    return `https://t.me/${chatUsername}/${match[2]}`;
  return channel.startsWith("-100") ? `https://t.me/c/${channel.slice(4)}/${match[2]}` : "";
}
