/** The platform's own link to a chat message, where the message's ids suffice to make one. */

import type { ChatMessage } from "./chat-message.js";

/** A Slack message id: its `ts`, seconds and microseconds. */
const SLACK_TS = /^\d+\.\d+$/;
/** A Slack channel id: upper-case letters and digits only, so nothing else can enter the link. */
const SLACK_CHANNEL = /^[A-Z0-9]+$/;

/**
 * The platform's own link to a message where its ids suffice, else "": Slack's `archives` link
 * (a message id is its `ts`; a thread reply names its thread). Discord's needs the guild and
 * Telegram's a public group's name, which messages do not carry: none. The link is made of ids
 * that match Slack's shapes only, so no chat-supplied string reaches it as written.
 */
export function messagePermalink(
  message: Pick<ChatMessage, "id" | "channel" | "platform" | "thread">,
): string {
  if (message.platform !== "slack" || !SLACK_TS.test(message.id)) return "";
  if (!SLACK_CHANNEL.test(message.channel)) return "";
  const base = `https://slack.com/archives/${message.channel}/p${message.id.replace(".", "")}`;
  const thread = message.thread;
  return thread !== undefined && thread !== message.id && SLACK_TS.test(thread)
    ? `${base}?thread_ts=${thread}&cid=${message.channel}`
    : base;
}
