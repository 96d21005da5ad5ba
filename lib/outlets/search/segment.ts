/**
 * A segment's search documents as the deployed index keeps them, written when its result is
 * stored and again when its messages change: its messages, the conversation, its questions, and
 * the channel's topics it supports. Only messages still stored are its evidence, so that a
 * deleted or erased message is cited by none.
 */
import { copyPlatformFields, type Message, messageText } from "../../history/index.js";
import type { ChatMessage } from "../../history/messages/index.js";
import { normalizeTopic } from "../../knowledge/extraction/index.js";
import type { Topic } from "../../knowledge/read/index.js";
import { type SearchDocument, type SearchResultSource, searchDocuments } from "./documents.js";

/** A message as a segment carries it (inline) or the store holds it (with parts). */
type SegmentMessage = Pick<Message, "id" | "ts" | "author" | "kind" | "deleted"> &
  Pick<ChatMessage, "userId" | "replyTo" | "thread" | "platform" | "channelName"> &
  ({ text: string } | Pick<Message, "parts">);

/** `channel`'s messages as chat messages: deleted ones and ones without an id or time left out. */
export function storedChatMessages(
  channel: string,
  messages: readonly SegmentMessage[],
): ChatMessage[] {
  const chat: ChatMessage[] = [];
  for (const message of messages) {
    if (message.deleted || message.id === undefined || message.ts === undefined) continue;
    const text = "text" in message ? message.text : messageText(message as Message);
    const one: ChatMessage = { id: message.id, ts: message.ts, channel, text };
    if (message.author !== undefined) one.user = message.author;
    if (message.kind !== undefined && message.kind !== "user") one.kind = message.kind;
    copyPlatformFields(message, one);
    chat.push(one);
  }
  return chat;
}

/**
 * The documents of `result`'s segment from its `messages` (those of other segments and deleted
 * ones are left out) and, of the channel's `topics`, those the segment supports.
 */
export function segmentDocuments(
  result: SearchResultSource,
  messages: readonly SegmentMessage[],
  topics: readonly Topic[] = [],
): SearchDocument[] {
  const ids = new Set(result.messageIds ?? []);
  const kept = storedChatMessages(result.channel, messages).filter(
    (m) => result.messageIds === undefined || ids.has(m.id),
  );
  const stored = new Set(kept.map((m) => m.id));
  const supported = new Set(result.candidates.map((c) => normalizeTopic(c.topic)));
  return searchDocuments({
    messages: kept,
    results: [
      { ...result, messageIds: (result.messageIds ?? [...stored]).filter((id) => stored.has(id)) },
    ],
    topics: topics
      .filter((topic) => supported.has(topic.normalizedTopic))
      .map((topic) => ({ channel: result.channel, topic })),
  });
}
