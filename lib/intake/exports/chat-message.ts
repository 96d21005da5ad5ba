/** An export's message as the segmenter and ingestion take it. */
import { copyPlatformFields } from "../../history/index.js";
import type { ChatMessage } from "../../history/messages/index.js";
import type { ExportMessage } from "./types.js";

/**
 * The {@link ChatMessage} of an exported message: id, epoch-ms time, channel, user, text, a
 * non-`user` kind, and the platform fields the export knows (`userId`, `replyTo`, `thread`,
 * `platform`, `channelName`).
 */
export function toChatMessage(message: ExportMessage): ChatMessage {
  const chat: ChatMessage = {
    id: message.id,
    ts: Date.parse(message.ts),
    channel: message.channel,
    user: message.user,
    text: message.text,
  };
  if (message.kind === "bot" || message.kind === "system") chat.kind = message.kind;
  copyPlatformFields(message, chat);
  return chat;
}
