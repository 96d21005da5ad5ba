/**
 * The `byAuthor` index (`./schema.ts`): a person's messages, page by page, keys and times. One Query
 * per page (and per author reference, and per channel with `channels`), so the cost follows their
 * messages, not the table.
 */
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import {
  type AuthoredMessage,
  type AuthorMessagesOptions,
  type AuthorPage,
  type AuthorQuery,
  decodeCursor,
  encodeCursor,
  prepareAuthorQuery,
} from "../changes/authors.js";
import { type TableAccess, withRetries } from "./access.js";
import { AUTHOR_KEY, authorRefKey, BY_AUTHOR_INDEX, PARTITION_KEY, SORT_KEY } from "./schema.js";

/**
 * Where a page ended: the (author, channel) scope it was in (an index into the references, each
 * with every channel of `channels` in turn) and the last key.
 */
interface Cursor {
  c: number;
  k?: Record<string, string>;
}

const isCursor = (value: unknown): value is Cursor =>
  typeof value === "object" &&
  value !== null &&
  Number.isInteger((value as Cursor).c) &&
  ((value as Cursor).k === undefined || typeof (value as Cursor).k === "object");

export async function authorMessages(
  access: TableAccess,
  authors: AuthorQuery,
  options?: AuthorMessagesOptions,
): Promise<AuthorPage> {
  const { refs, limit, channels } = prepareAuthorQuery(authors, options);
  const scopes = refs.flatMap((ref) =>
    (channels ?? [undefined]).map((channel) => ({ key: authorRefKey(ref), channel })),
  );
  let at: Cursor = options?.cursor ? decodeCursor(options.cursor, isCursor) : { c: 0 };
  const messages: AuthoredMessage[] = [];
  while (at.c < scopes.length && messages.length < limit) {
    const { key, channel } = scopes[at.c];
    const names: Record<string, string> = { "#a": AUTHOR_KEY };
    const values: Record<string, string> = { ":a": key };
    let condition = "#a = :a";
    if (channel !== undefined) {
      names["#c"] = PARTITION_KEY;
      values[":c"] = channel;
      condition += " AND #c = :c";
    }
    const page = await withRetries(access, () =>
      access.documents.send(
        new QueryCommand({
          TableName: access.tableName,
          IndexName: BY_AUTHOR_INDEX,
          KeyConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          Limit: limit - messages.length,
          ExclusiveStartKey: at.k,
        }),
        { abortSignal: options?.signal },
      ),
    );
    for (const item of page.Items ?? []) {
      const sortKey = item[SORT_KEY] as string;
      const found: AuthoredMessage = {
        conversationId: item[PARTITION_KEY] as string,
        id: sortKey.slice(2),
      };
      if (typeof item.ts === "number") found.ts = item.ts;
      messages.push(found);
    }
    const last = page.LastEvaluatedKey as Record<string, string> | undefined;
    at = last === undefined ? { c: at.c + 1 } : { c: at.c, k: last };
  }
  return at.c < scopes.length ? { messages, cursor: encodeCursor(at) } : { messages };
}
