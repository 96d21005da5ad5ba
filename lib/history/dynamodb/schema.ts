/**
 * The messages table: its key schema, indexes and item shapes, schema version 1. This is a public
 * contract (documented in the README) because users' own ingestion Lambdas may write it directly.
 *
 * - Partition key `conversation` (S): the conversation (channel) id.
 * - Sort key `key` (S): `m#<platform id>` for a message with a platform id, so a message written
 *   twice is one item; `p#<position>` for one without; `#conversation` for the conversation's own
 *   item, which puts it in the `conversations` index.
 * - `position` (S): arrival position, 20 decimal digits of nanoseconds since the epoch (a
 *   `Sequence`), separate from the platform timestamp `ts`. The local secondary index
 *   `byPosition` orders a conversation's messages by it, so "everything after position P" is one
 *   Query, paged, strongly consistent, and no Scan.
 */
import type { Message, Part } from "../message.js";

export const SCHEMA_VERSION = 1;
export const PARTITION_KEY = "conversation";
export const SORT_KEY = "key";
export const POSITION = "position";
export const BY_POSITION_INDEX = "byPosition";
export const CONVERSATIONS_INDEX = "conversations";
/** Partition key of the conversations index; every conversation item has the same value. */
export const LISTED = "listed";
export const LISTED_VALUE = "conversation";
export const CONVERSATION_ITEM_KEY = "#conversation";

/** DynamoDB's item size limit. */
export const MAX_ITEM_BYTES = 400 * 1024;

export interface MessageItem {
  conversation: string;
  key: string;
  position: string;
  v: number;
  role: Message["role"];
  parts: Part[];
  metadata?: Message["metadata"];
  id?: string;
  ts?: number;
  author?: string;
}

export const encodePosition = (position: bigint): string => position.toString().padStart(20, "0");
export const decodePosition = (position: string): bigint => BigInt(position);

export function messageItem(conversation: string, message: Message, position: bigint): MessageItem {
  const encoded = encodePosition(position);
  const item: MessageItem = {
    conversation,
    key: message.id === undefined ? `p#${encoded}` : `m#${message.id}`,
    position: encoded,
    v: SCHEMA_VERSION,
    role: message.role,
    parts: message.parts,
  };
  if (message.metadata !== undefined) item.metadata = message.metadata;
  if (message.id !== undefined) item.id = message.id;
  if (message.ts !== undefined) item.ts = message.ts;
  if (message.author !== undefined) item.author = message.author;
  return item;
}

/** The message an item holds; throws for an item of another schema version. */
export function itemMessage(item: Record<string, unknown>): Message {
  if (item.v !== SCHEMA_VERSION) {
    throw new Error(
      `history/dynamodb: item ${String(item.key)} of conversation ${JSON.stringify(item.conversation)} has schema version ${String(item.v)}, expected ${SCHEMA_VERSION}`,
    );
  }
  const stored = item as unknown as MessageItem;
  const message: Message = { role: stored.role, parts: stored.parts };
  if (stored.metadata !== undefined) message.metadata = stored.metadata;
  if (stored.id !== undefined) message.id = stored.id;
  if (stored.ts !== undefined) message.ts = stored.ts;
  if (stored.author !== undefined) message.author = stored.author;
  return message;
}

/**
 * An upper bound of the size DynamoDB counts for an item: attribute names and string values in
 * UTF-8 bytes, numbers at their 21-byte maximum, binary at its length, and 3 bytes per list or
 * map plus 1 per element. Over-estimating only ever rejects an item within a few bytes of the
 * limit.
 */
export function itemSize(value: unknown): number {
  if (typeof value === "string") return Buffer.byteLength(value);
  if (typeof value === "number") return 21;
  if (typeof value === "boolean" || value === null || value === undefined) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (Array.isArray(value)) return value.reduce((sum: number, v) => sum + 1 + itemSize(v), 3);
  let size = 3;
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    if (v !== undefined) size += 1 + Buffer.byteLength(name) + itemSize(v);
  }
  return size;
}
