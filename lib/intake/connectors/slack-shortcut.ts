/**
 * Slack's message shortcut as its Interactivity request carries it (a form field `payload`
 * holding JSON, `type: message_action`): only what a mark needs, each id checked for its shape,
 * since the ids go on to the store and the reply goes to `response_url`.
 */
import { z } from "zod";
import type { MarkAction } from "./ask.js";

/** The callback ids the app's shortcuts are made with (docs/connectors.md), by action. */
export const MARK_CALLBACKS: Readonly<Record<string, MarkAction>> = {
  mark_answer: "answered",
  reopen_question: "reopen",
  hide_question: "hidden",
};

const SLACK_ID = z.string().regex(/^[A-Z0-9]{2,30}$/);
const SLACK_TS = z.string().regex(/^\d{1,12}\.\d{1,9}$/);

const MESSAGE_ACTION = z.object({
  type: z.literal("message_action"),
  callback_id: z.string().max(255),
  channel: z.object({ id: SLACK_ID, name: z.string().max(200).optional() }),
  user: z.object({ id: SLACK_ID }),
  message: z.object({ ts: SLACK_TS, thread_ts: SLACK_TS.optional() }),
  response_url: z.string().url().max(2000),
});

export interface SlackMessageAction {
  callbackId: string;
  channel: string;
  /** A DM, or a group DM (`mpdm-…`): private, as for `/ask`. */
  isPrivate: boolean;
  user: string;
  /** The message chosen. */
  messageTs: string;
  /** Its thread's root, when it is a reply in a thread (not the root itself). */
  threadTs?: string;
  responseUrl: string;
}

/** The payload's message shortcut; undefined: not one (another interaction, or malformed). */
export function slackShortcut(payload: string): SlackMessageAction | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return undefined;
  }
  const parsed = MESSAGE_ACTION.safeParse(value);
  if (!parsed.success) return undefined;
  const { callback_id, channel, user, message, response_url } = parsed.data;
  const thread = message.thread_ts;
  return {
    callbackId: callback_id,
    channel: channel.id,
    isPrivate: channel.id.startsWith("D") || (channel.name ?? "").startsWith("mpdm-"),
    user: user.id,
    messageTs: message.ts,
    ...(thread !== undefined && thread !== message.ts && { threadTs: thread }),
    responseUrl: response_url,
  };
}
