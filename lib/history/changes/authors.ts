/**
 * Finding a person's messages: the `AuthorIndex` both history stores answer, which an erasure
 * (`lib/lifecycle/erasure`) pages through. Paging is by key, so deleting the messages of a page while
 * paging neither skips nor repeats any later one.
 */
import { type ConversationId, validateConversationId } from "../conversation-id.js";
import { InvalidMessageError } from "../errors.js";
import type { CallOptions } from "../store.js";

/** A message found by its author: where it is and its platform id. */
export interface AuthoredMessage {
  conversationId: ConversationId;
  id: string;
  /** Its platform time, when it has one. */
  ts?: number;
}

export interface AuthorMessagesOptions extends CallOptions {
  /** Only these conversations (channels), in this order; default: every one. */
  channels?: readonly ConversationId[];
  /** At most this many messages per page, 1 to 1,000 (default 100). */
  limit?: number;
  /** Where the previous page ended (its `cursor`); default: the start. */
  cursor?: string;
}

/**
 * Whom an author query names. A message is its author's by its platform `userId` when it has
 * one (stable; the display name may change, and two people may share one), else by its stored
 * display name (`author`). So `{user}` finds only the messages stored without a `userId`.
 */
export type AuthorRef = { userId: string; user?: undefined } | { user: string; userId?: undefined };

/** What `authorMessages` takes: a display name (as `{user}`), one reference, or several. */
export type AuthorQuery = string | AuthorRef | readonly AuthorRef[];

/** Whether `message` is the one `ref` names (see {@link AuthorRef}). */
export function authorMatches(
  message: { author?: string; userId?: string },
  ref: AuthorRef,
): boolean {
  if (ref.userId !== undefined) return message.userId === ref.userId;
  return message.userId === undefined && message.author === ref.user;
}

export interface AuthorPage {
  messages: AuthoredMessage[];
  /** Pass it for the next page; absent on the last. A page may be short, or empty, before it. */
  cursor?: string;
}

/**
 * Finds the messages the authors named wrote (several: in the order given, each page by page) that have a platform id and are not deleted.
 * The DynamoDB index is eventually consistent: a page may still hold a message deleted a moment
 * ago, or miss one written a moment ago, so callers check each with a consistent read by id.
 */
export interface AuthorIndex {
  authorMessages(authors: AuthorQuery, options?: AuthorMessagesOptions): Promise<AuthorPage>;
}

const DEFAULT_AUTHOR_PAGE = 100;
const MAX_AUTHOR_PAGE = 1000;

/**
 * Checks an author query before any I/O; returns its references, the page size and the
 * channels, each deduplicated.
 */
export function prepareAuthorQuery(
  authors: AuthorQuery,
  options?: AuthorMessagesOptions,
): { refs: AuthorRef[]; limit: number; channels?: ConversationId[] } {
  options?.signal?.throwIfAborted();
  const given: readonly AuthorRef[] =
    typeof authors === "string"
      ? [{ user: authors }]
      : Array.isArray(authors)
        ? authors
        : [authors as AuthorRef];
  const refs: AuthorRef[] = [];
  for (const ref of given) {
    const [field, value] =
      ref?.userId !== undefined ? ["userId", ref.userId] : ["author", ref?.user];
    if (typeof value !== "string" || value === "") {
      throw new InvalidMessageError(field, "expected a non-empty string");
    }
    if (!refs.some((r) => r.userId === ref.userId && r.user === ref.user)) refs.push(ref);
  }
  if (refs.length === 0) throw new InvalidMessageError("author", "name at least one author");
  const limit = options?.limit ?? DEFAULT_AUTHOR_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUTHOR_PAGE) {
    throw new InvalidMessageError("limit", `expected a whole number from 1 to ${MAX_AUTHOR_PAGE}`);
  }
  if (options?.channels === undefined) return { refs, limit };
  for (const channel of options.channels) validateConversationId(channel);
  return { refs, limit, channels: [...new Set(options.channels)] };
}

/** A cursor as callers hold it: opaque, URL-safe. */
export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

/** The value of a cursor; an {@link InvalidMessageError} when it is not one this store made. */
export function decodeCursor<T>(cursor: string, valid: (value: unknown) => value is T): T {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString());
  } catch {
    value = undefined;
  }
  if (!valid(value)) {
    throw new InvalidMessageError("cursor", "not a cursor of this store: pass a page's own cursor");
  }
  return value;
}

/**
 * Whether `text` names `name` as a whole word, whatever the case and the spaces around and
 * between its words (a display name may be stored as `Alice Zorbington `). Both are lower-cased
 * as the extractor lower-cases names, which is not always what a case-insensitive match folds.
 */
export function mentions(text: string, name: string): boolean {
  const words = name.trim().toLowerCase().split(/\s+/u);
  if (words[0] === "") return false;
  const escaped = words.map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("\\s+");
  return new RegExp(`(^|[^\\p{L}\\p{N}_])${escaped}($|[^\\p{L}\\p{N}_])`, "iu").test(
    text.toLowerCase(),
  );
}
