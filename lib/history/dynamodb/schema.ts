/**
 * The messages table: its key schema, indexes and item shapes, schema version 1. This is a public
 * contract (docs/contracts/messages-table-v1.md) because users' own ingestion Lambdas write it.
 *
 * - Partition key `conversation` (S): the conversation (channel) id.
 * - Sort key `key` (S): `m#<platform id>` for a message with a platform id, so a message written
 *   twice is one item; `p#<position>` for one without; `#conversation` for the conversation's own
 *   item, which puts it in the `conversations` index.
 * - `position` (S): arrival position, 20 decimal digits of nanoseconds since the epoch (a
 *   `Sequence`), separate from the platform timestamp `ts`. The local secondary index
 *   `byPosition` orders a conversation's messages by it, so "everything after position P" is one
 *   Query, paged, strongly consistent, and no Scan. It projects only `id` and `ts` (besides the
 *   keys): what the pipeline reads of each arrival. A full projection would store every message
 *   twice, which halves the largest storable message and doubles the cost of writing one.
 * - Edits and deletions (`./changes.ts`) add `editedAt` (N), `deleted` (BOOL, true) and `pending`
 *   (S, a tracked change awaiting its follow-up); a deleted item has no `parts`, `author` or
 *   `metadata` (nor `userId`). A held change (of an id not stored) is `m#<id>` with `id`,
 *   `expiresAt` (the end of its hold) and `deleted`, or an edit's `parts` and `editedAt`: no
 *   position, so it is in no index, and a message put after its hold replaces it. A tombstone
 *   written before holds (no `expiresAt`) refuses the message for good.
 * - `authorKey` (S): a message with a platform id and an author carries {@link messageAuthorKey}:
 *   a hash of its `userId` when it has one, else of its `author`, so that no name or user id is
 *   an index key. The sparse global index `byAuthor` (keyed
 *   by it, sorted by `conversation`, holding `ts` besides the keys) finds a person's messages for an erasure
 *   without a Scan. A deletion removes it with the author, which takes the item out of the index.
 */
import { createHash } from "node:crypto";
import { itemSize, MAX_ITEM_BYTES } from "../../base/dynamodb/index.js";
import { MAX_CONVERSATION_ID_BYTES, MAX_MESSAGE_ID_BYTES } from "../../base/identity/index.js";
import type { AuthorRef } from "../changes/authors.js";
import { copyPlatformFields, type Message, type Part, type PlatformFields } from "../message.js";

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
export const BY_AUTHOR_INDEX = "byAuthor";
export const AUTHOR_KEY = "authorKey";
/**
 * What `byAuthor` holds besides the keys: the platform time, which an erasure needs to find the
 * message's results, so that it reads no message to learn it.
 */
export const BY_AUTHOR_ATTRIBUTES = ["ts"] as const;
/** Hex digits of the SHA-256 an author key keeps: 128 bits, so two authors never share one. */
const AUTHOR_KEY_HEX = 32;

/** The `authorKey` of a display name: a hex prefix of the SHA-256 of the stored `author`. */
export function authorKeyOf(author: string): string {
  return createHash("sha256").update(author).digest("hex").slice(0, AUTHOR_KEY_HEX);
}

/**
 * The `authorKey` of a platform user id. The prefix, a NUL no display name carries in practice,
 * keeps a user id from hashing as the display name of the same text ("U1" the id is not "U1"
 * the name), while a name's key stays what items stored before user ids have.
 */
export function userIdKeyOf(userId: string): string {
  return authorKeyOf(`\u0000userId\u0000${userId}`);
}

/** The key of whom a query names (`AuthorRef`): its user id's, or its display name's. */
export function authorRefKey(ref: AuthorRef): string {
  return ref.userId !== undefined ? userIdKeyOf(ref.userId) : authorKeyOf(ref.user);
}

/**
 * The `authorKey` a message item carries: by its stable `userId` when it has one, else by its
 * display name; none without a platform id (only `m#<id>` can be deleted) or either.
 */
export function messageAuthorKey(message: {
  id?: string;
  author?: string;
  userId?: string;
}): string | undefined {
  if (message.id === undefined) return undefined;
  if (message.userId !== undefined && message.userId !== "") return userIdKeyOf(message.userId);
  return message.author === undefined ? undefined : authorKeyOf(message.author);
}
/**
 * The TTL attribute (epoch seconds): a message carries it when the deployment sets a message
 * retention. The table has TTL on this attribute whether or not any item carries it.
 */
export const MESSAGES_TTL_ATTRIBUTE = "expiresAt";
/**
 * The room a message item keeps for {@link MESSAGES_TTL_ATTRIBUTE} (any expiry in epoch seconds before the
 * year 2286), so that whether a message fits does not depend on the writer's retention.
 */
const LONGEST_EXPIRY = 9_999_999_999;
/** The attributes `byPosition` holds besides the keys: what a reader of arrivals needs. */
export const BY_POSITION_ATTRIBUTES = ["id", "ts"] as const;

/**
 * A message item: the keys, `position`, `v` and the message. The platform fields (`userId`,
 * `replyTo`, `thread`, `platform`, `channelName`, `guild`, `chatUsername`; strings) were added within version 1: an item
 * without them is a message that has none, and readers ignore attributes they do not know.
 */
export interface MessageItem extends PlatformFields {
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
  /** {@link messageAuthorKey}, for the `byAuthor` index; with a platform id only. */
  authorKey?: string;
  /** Absent for a `user` message (and for every message stored before kinds existed). */
  kind?: Message["kind"];
  /** Epoch seconds after which DynamoDB's TTL deletes the item; absent: kept. */
  expiresAt?: number;
}

/** Attributes that edits and deletions add to a message item (additive within version 1). */
export const EDITED_AT = "editedAt";
export const DELETED = "deleted";
export const PENDING = "pending";
/** Every attribute an edit or deletion names, keys included: what its IAM grant allows. */
export const CHANGE_ATTRIBUTES = [
  PARTITION_KEY,
  SORT_KEY,
  // Only in its condition: a change updates a stored message, never a held change.
  POSITION,
  "parts",
  "author",
  "userId",
  AUTHOR_KEY,
  "metadata",
  "channelName",
  EDITED_AT,
  DELETED,
  PENDING,
] as const;

/** The reply linker's inferred parent, set on a stored message by the segmentation tick. */
export const INFERRED_REPLY_TO = "inferredReplyTo";
/** What the tick's grant to record inferred replies names, keys included. */
export const INFERRED_REPLY_ATTRIBUTES = [PARTITION_KEY, SORT_KEY, INFERRED_REPLY_TO] as const;

/**
 * What a digest reads of a message, and all a reader of activity may read (the API's and the
 * digest's roles are held to these and the key): when, by whom, whether deleted (its activity),
 * and its platform, thread, Discord guild and public Telegram group's name (what the platform's
 * link to an entry's evidence is made of); never its text, nor its author's id.
 */
export const ACTIVITY_ATTRIBUTES = [
  "id",
  "ts",
  "author",
  "kind",
  DELETED,
  "platform",
  "thread",
  "guild",
  "chatUsername",
] as const;

/**
 * What the read API's channel list reads of a channel's first and latest arrivals (the API's role
 * is held to these and the keys): when each was sent, whether it was deleted, and the channel's
 * name and platform it carries. Never its text, nor who wrote it.
 */
export const CHANNEL_FACT_ATTRIBUTES = ["ts", DELETED, "channelName", "platform"] as const;

/**
 * The attributes of a held deletion (`./changes.ts`), and those its condition names
 * (`position`, which it never sets): what a deleter's put may name.
 */
export const TOMBSTONE_ATTRIBUTES = [
  PARTITION_KEY,
  SORT_KEY,
  "v",
  "id",
  DELETED,
  MESSAGES_TTL_ATTRIBUTE,
  POSITION,
] as const;

export const encodePosition = (position: bigint): string => position.toString().padStart(20, "0");
export const decodePosition = (position: string): bigint => BigInt(position);

export function messageItem(
  conversation: string,
  message: Message,
  position: bigint,
  expiresAt?: number,
): MessageItem {
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
  // Only a message with an id can be deleted (`m#<id>`): only it is worth finding by author.
  const authorKey = messageAuthorKey(message);
  if (authorKey !== undefined) item.authorKey = authorKey;
  if (message.kind !== undefined) item.kind = message.kind;
  copyPlatformFields(message, item);
  if (expiresAt !== undefined) item.expiresAt = expiresAt;
  return item;
}

/** The message an item holds; throws for an item of another schema version. */
export function itemMessage(item: Record<string, unknown>): Message {
  if (item.v !== SCHEMA_VERSION) {
    throw new Error(
      `history/dynamodb: item ${String(item.key)} of conversation ${JSON.stringify(item.conversation)} has schema version ${String(item.v)}, expected ${SCHEMA_VERSION}`,
    );
  }
  const stored = item as unknown as MessageItem & { editedAt?: number; deleted?: boolean };
  // A held change has no role (nor, a deletion, parts); a deleted item has no parts.
  const message: Message = { role: stored.role ?? "user", parts: stored.parts ?? [] };
  if (stored.metadata !== undefined) message.metadata = stored.metadata;
  if (stored.id !== undefined) message.id = stored.id;
  if (stored.ts !== undefined) message.ts = stored.ts;
  if (stored.author !== undefined) message.author = stored.author;
  if (stored.kind !== undefined) message.kind = stored.kind;
  copyPlatformFields(stored, message);
  if (stored.editedAt !== undefined) message.editedAt = stored.editedAt;
  if (stored.deleted === true) message.deleted = true;
  const inferred = item[INFERRED_REPLY_TO];
  if (typeof inferred === "string" && inferred !== "") message.inferredReplyTo = inferred;
  return message;
}

/** What of a message DynamoDB would refuse to store: its conversation key, its id, or its size. */
export interface StorageProblem {
  part: "conversation" | "id" | "size";
  reason: string;
}

/**
 * Why DynamoDB would refuse the item of `message` in `conversation`, or undefined: the
 * conversation over 1,024 bytes (the conversations index's sort key), the sort key over 1,024 (a
 * platform id over 1,022 bytes), or the item over
 * 400 KB. For an item with a local secondary index DynamoDB counts the item and its index entry
 * together against the 400 KB; room is kept for an expiry whether or not the writer sets one.
 */
export function storageProblem(conversation: string, message: Message): StorageProblem | undefined {
  const keyBytes = Buffer.byteLength(conversation);
  if (keyBytes > MAX_CONVERSATION_ID_BYTES) {
    return {
      part: "conversation",
      reason: `takes ${keyBytes} bytes as UTF-8, over the ${MAX_CONVERSATION_ID_BYTES}-byte limit of a DynamoDB sort key (the conversations index sorts by it): shorten it`,
    };
  }
  if (message.id !== undefined && Buffer.byteLength(message.id) > MAX_MESSAGE_ID_BYTES) {
    return {
      part: "id",
      reason: `takes ${Buffer.byteLength(message.id)} bytes as UTF-8, over the ${MAX_MESSAGE_ID_BYTES}-byte limit of a DynamoDB sort key (m#<id>)`,
    };
  }
  const bytes = storedSize(messageItem(conversation, message, 0n, LONGEST_EXPIRY));
  if (bytes > MAX_ITEM_BYTES) {
    return {
      part: "size",
      reason: `takes ${bytes} bytes as an item with its index entry, over DynamoDB's ${MAX_ITEM_BYTES}-byte limit`,
    };
  }
  return undefined;
}

/** What DynamoDB counts against the 400 KB limit: the item and its `byPosition` entry. */
export function storedSize(item: MessageItem): number {
  return itemSize(item as unknown as Record<string, unknown>) + itemSize(indexEntry(item));
}

/** The `byAuthor` entry of an item (its keys and `ts`), or undefined when it has no author key. */
export function authorEntry(item: MessageItem): Record<string, unknown> | undefined {
  if (item.authorKey === undefined) return undefined;
  return {
    [AUTHOR_KEY]: item.authorKey,
    [PARTITION_KEY]: item.conversation,
    [SORT_KEY]: item.key,
    ...(item.ts === undefined ? {} : { ts: item.ts }),
  };
}

/** The `byPosition` entry of an item: the table's keys, the index key and the projected attributes. */
export function indexEntry(item: MessageItem): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    [PARTITION_KEY]: item.conversation,
    [SORT_KEY]: item.key,
    [POSITION]: item.position,
  };
  for (const name of BY_POSITION_ATTRIBUTES) {
    if (item[name] !== undefined) entry[name] = item[name];
  }
  return entry;
}
