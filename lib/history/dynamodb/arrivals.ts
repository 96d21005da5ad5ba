/**
 * What a read of arrivals returns: the `byPosition` index's entry of each message and, on
 * request, its links and what the reply linker reads of it, and which attributes each read names.
 */
import { type Message, type MessageKind, messageText } from "../message.js";
import {
  BY_POSITION_ATTRIBUTES,
  INFERRED_REPLY_TO,
  PARTITION_KEY,
  POSITION,
  SORT_KEY,
} from "./schema.js";

/**
 * What the `byPosition` index holds of an arrival: its position, platform id and timestamp; and,
 * when read `links` (not projected: fetched from the table), its `thread` and `replyTo`.
 */
export interface Arrival {
  position: bigint;
  id?: string;
  ts?: number;
  thread?: string;
  replyTo?: string;
  /** Read with `content`: what the reply linker reads of a message (nothing else of it). */
  content?: ArrivalContent;
}

/** A message's author, kind and text, as the reply linker reads them. */
export interface ArrivalContent {
  author: string;
  userId?: string;
  kind?: MessageKind;
  text: string;
  /** The parent a tick inferred and recorded before (it died before moving past the message). */
  inferredReplyTo?: string;
}

/** The content of a stored message for the reply linker (a deleted one has no text). */
export function arrivalContent(message: Message): ArrivalContent {
  const content: ArrivalContent = { author: message.author ?? "", text: messageText(message) };
  if (message.userId !== undefined) content.userId = message.userId;
  if (message.kind !== undefined) content.kind = message.kind;
  if (message.inferredReplyTo !== undefined) content.inferredReplyTo = message.inferredReplyTo;
  return content;
}

/**
 * What an arrivals read with links asks for: the index's attributes (with the table's keys, as
 * `ALL_PROJECTED_ATTRIBUTES` returns them), and the two links.
 */
export const LINK_ATTRIBUTES = [
  PARTITION_KEY,
  SORT_KEY,
  POSITION,
  ...BY_POSITION_ATTRIBUTES,
  "thread",
  "replyTo",
] as const;

/**
 * What an arrivals read with content adds: the item is fetched from the table for the links
 * anyway, so the author and text cost no more read units, only bytes.
 */
export const CONTENT_ATTRIBUTES = [
  ...LINK_ATTRIBUTES,
  "v",
  "role",
  "author",
  "userId",
  "kind",
  "parts",
  INFERRED_REPLY_TO,
] as const;
