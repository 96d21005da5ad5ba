/** An export's message as the segmenter and ingestion take it today. */
import type { ChatMessage } from "../messages/index.js";
import type { ExportMessage } from "./types.js";

/**
 * The {@link ChatMessage} of an exported message: id, epoch-ms time, channel, user, text and a
 * non-`user` kind. The other fields (`userId`, `replyTo`, `thread`, `platform`, `channelName`)
 * are not in the chat message model yet (issue 22 §1), so they are left out here.
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
  return chat;
}
