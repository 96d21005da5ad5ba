/**
 * A channel's stored messages as chat messages, as the commands that read a workspace whole
 * (`report`, `search`) take them: text, author, kind, the platform's fields and the parent the
 * reply linker inferred.
 */
import { copyPlatformFields, type Message, messageText } from "convoseg/history";
import type { ReportMessage } from "convoseg/report";

export function chatMessagesOf(channel: string, stored: readonly Message[]): ReportMessage[] {
  const messages: ReportMessage[] = [];
  for (const message of stored) {
    // Every message of a channel was ingested with its id and time (lib/intake/ingest).
    if (message.id === undefined || message.ts === undefined) continue;
    const chat: ReportMessage = {
      id: message.id,
      ts: message.ts,
      channel,
      text: messageText(message),
    };
    if (message.author !== undefined) chat.user = message.author;
    if (message.kind !== undefined && message.kind !== "user") chat.kind = message.kind;
    // Replies, threads and the channel's display name.
    copyPlatformFields(message, chat);
    // The parent the reply linker inferred (linked mode), shown apart from the platform's.
    if (message.inferredReplyTo !== undefined) chat.inferredReplyTo = message.inferredReplyTo;
    messages.push(chat);
  }
  return messages;
}
