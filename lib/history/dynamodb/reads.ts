/** The store's reads: a conversation's arrivals in position order, and messages by platform id. */
import { BatchGetCommand, paginateQuery } from "@aws-sdk/lib-dynamodb";
import { backoff } from "../../base/backoff/index.js";
import { projectionOf } from "../../base/dynamodb/index.js";
import { type ConversationId, validateConversationId } from "../conversation-id.js";
import type { Message } from "../message.js";
import { Sequence } from "../sequence.js";
import type { CallOptions } from "../store.js";
import { type TableAccess, withRetries } from "./access.js";
import {
  ACTIVITY_ATTRIBUTES,
  BY_POSITION_INDEX,
  DELETED,
  encodePosition,
  itemMessage,
  PARTITION_KEY,
  POSITION,
  SORT_KEY,
} from "./schema.js";

const MAX_BATCH_GETS = 100;

/** A read of positions: pages of `pageSize` items, and at or before `upTo` when given. */
export type PositionReadOptions = CallOptions & { pageSize?: number; upTo?: bigint };

/**
 * The items of a conversation that arrived after position `after` (from the start when
 * undefined) and, with `upTo`, at or before it, in arrival order, read page by page from the
 * `byPosition` index with strong consistency: whole items (`ALL_ATTRIBUTES`, which the index
 * fetches from the table), what the index holds (`ALL_PROJECTED_ATTRIBUTES`), or the named
 * attributes (those the index does not project are fetched from the table, item by item).
 */
export async function* queryPositions(
  access: TableAccess,
  conversationId: ConversationId,
  after: bigint | undefined,
  options: PositionReadOptions | undefined,
  select: "ALL_ATTRIBUTES" | "ALL_PROJECTED_ATTRIBUTES" | readonly string[],
): AsyncIterable<Record<string, unknown>> {
  options?.signal?.throwIfAborted();
  validateConversationId(conversationId);
  const from = encodePosition(after === undefined ? 0n : after + 1n);
  const to = encodePosition(options?.upTo ?? Sequence.MAX);
  if (from > to) return;
  const named = typeof select === "string" ? undefined : projectionOf(select);
  const names = { "#c": PARTITION_KEY, "#p": POSITION, ...named?.ExpressionAttributeNames };
  const projection =
    typeof select === "string"
      ? { Select: select }
      : {
          Select: "SPECIFIC_ATTRIBUTES" as const,
          ProjectionExpression: named?.ProjectionExpression,
        };
  const pages = paginateQuery(
    { client: access.documents, pageSize: options?.pageSize },
    {
      TableName: access.tableName,
      IndexName: BY_POSITION_INDEX,
      ConsistentRead: true,
      ...projection,
      KeyConditionExpression: "#c = :c AND #p BETWEEN :from AND :to",
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ":c": conversationId, ":from": from, ":to": to },
    },
    ...(options?.signal ? [{ abortSignal: options.signal }] : []),
  );
  for await (const page of pages) yield* page.Items ?? [];
}

/**
 * The messages of a conversation with the given platform ids, in the order of `ids`; ids that
 * are not stored are left out, and so are held changes (no position: no message). Reads by key
 * in batches of 100, retrying unprocessed keys.
 */
export async function getMessages(
  access: TableAccess,
  conversationId: ConversationId,
  ids: readonly string[],
  options?: CallOptions,
): Promise<Message[]> {
  const found = await getItems(access, conversationId, ids, options);
  return ids.flatMap((id) => {
    const item = found.get(id);
    // A held change has no position: it is no message (yet).
    return item?.[POSITION] !== undefined ? [itemMessage(item)] : [];
  });
}

/**
 * When a message was sent, by whom (display name), whether it is deleted, and its platform and
 * thread's root (what the platform's link to it needs), each where the item has it.
 */
export interface MessageFacts {
  id: string;
  ts?: number;
  author?: string;
  /** Absent for a person's message (`user`). */
  kind?: Message["kind"];
  deleted?: boolean;
  platform?: string;
  thread?: string;
  guild?: string;
  chatUsername?: string;
}

/** {@link getMessages} reading only {@link ACTIVITY_ATTRIBUTES}. */
export async function getMessageFacts(
  access: TableAccess,
  conversationId: ConversationId,
  ids: readonly string[],
  options?: CallOptions,
): Promise<MessageFacts[]> {
  const found = await getItems(access, conversationId, ids, options, ACTIVITY_ATTRIBUTES);
  return ids.flatMap((id) => {
    const item = found.get(id);
    if (item === undefined) return [];
    const facts: MessageFacts = { id };
    if (typeof item.ts === "number") facts.ts = item.ts;
    if (typeof item.author === "string") facts.author = item.author;
    if (item.kind === "bot" || item.kind === "system") facts.kind = item.kind;
    if (item[DELETED] === true) facts.deleted = true;
    if (typeof item.platform === "string") facts.platform = item.platform;
    if (typeof item.thread === "string") facts.thread = item.thread;
    if (typeof item.guild === "string") facts.guild = item.guild;
    if (typeof item.chatUsername === "string") facts.chatUsername = item.chatUsername;
    return [facts];
  });
}

/** The items with the given ids by their id, with only `attributes` when named. */
async function getItems(
  access: TableAccess,
  conversationId: ConversationId,
  ids: readonly string[],
  options?: CallOptions,
  attributes?: readonly string[],
): Promise<Map<string, Record<string, unknown>>> {
  options?.signal?.throwIfAborted();
  validateConversationId(conversationId);
  const { documents, tableName } = access;
  const projection = attributes === undefined ? {} : projectionOf(attributes);
  const found = new Map<string, Record<string, unknown>>();
  for (let i = 0; i < ids.length; i += MAX_BATCH_GETS) {
    let keys: Record<string, unknown>[] = [...new Set(ids.slice(i, i + MAX_BATCH_GETS))].map(
      (id) => ({ [PARTITION_KEY]: conversationId, [SORT_KEY]: `m#${id}` }),
    );
    for (let attempt = 1; keys.length > 0; attempt++) {
      const result = await withRetries(access, () =>
        documents.send(
          new BatchGetCommand({
            RequestItems: { [tableName]: { Keys: keys, ConsistentRead: true, ...projection } },
          }),
          { abortSignal: options?.signal },
        ),
      );
      for (const item of result.Responses?.[tableName] ?? []) found.set(item.id as string, item);
      keys = result.UnprocessedKeys?.[tableName]?.Keys ?? [];
      if (keys.length > 0) {
        if (attempt >= access.maxAttempts) {
          throw new Error(`history/dynamodb: ${keys.length} reads still unprocessed`);
        }
        await backoff(access.pacing, attempt);
      }
    }
  }
  return found;
}
