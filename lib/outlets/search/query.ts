/**
 * A query's checks and its filters as the index's SQL filter (a hit's snippet is `snippet/`).
 * Filter values are validated and quoted here, never pasted: a channel id or an author id comes
 * from whoever asks.
 */
import { conversationIdProblem } from "../../base/identity/index.js";
import { SEARCH_KINDS, type SearchKind } from "./documents.js";
import { SearchError } from "./errors.js";

export const QUESTION_STATUSES = ["answered", "unanswered", "unclear"] as const;
/** The most hits one query returns. */
export const MAX_HITS = 100;
/** The longest query taken, in characters. */
const MAX_QUERY_CHARS = 500;

export interface SearchFilters {
  /** Only these channels (ids); absent or empty: every channel. */
  channels?: readonly string[];
  /** Only these kinds; absent or empty: every kind. */
  kinds?: readonly SearchKind[];
  /** Only questions of this status. */
  status?: (typeof QUESTION_STATUSES)[number];
  /** Epoch ms bounds, `since` included, `until` not. */
  since?: number;
  until?: number;
  /** Only what this person (platform id) wrote or asked. */
  authorId?: string;
}

export interface SearchQuery extends SearchFilters {
  text: string;
  /** At most {@link MAX_HITS}; default 20. */
  limit?: number;
  /** Hits skipped, for the next page: at most {@link MAX_OFFSET}; default 0. */
  offset?: number;
}

/** How deep pages go: past the thousandth hit a query wants more words, not more pages. */
export const MAX_OFFSET = 1000;

/** A string as an SQL literal: quotes doubled, never pasted as it came. */
export const quote = (value: string) => `'${value.replaceAll("'", "''")}'`;

/** The checked query: every problem named at once, by parameter. */
export function checkQuery(
  query: SearchQuery,
): Required<Pick<SearchQuery, "text" | "limit" | "offset">> {
  const problems: string[] = [];
  const text = query.text.trim();
  if (text === "") problems.push("the query is empty: give the words to look for");
  if (text.length > MAX_QUERY_CHARS)
    problems.push(`the query is ${text.length} characters long, more than ${MAX_QUERY_CHARS}`);
  const limit = query.limit ?? 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_HITS)
    problems.push(`limit must be a whole number from 1 to ${MAX_HITS} (got ${String(limit)})`);
  const offset = query.offset ?? 0;
  if (!Number.isInteger(offset) || offset < 0 || offset > MAX_OFFSET)
    problems.push(`offset must be a whole number from 0 to ${MAX_OFFSET} (got ${String(offset)})`);
  for (const channel of query.channels ?? []) {
    const problem = conversationIdProblem(channel);
    if (problem !== undefined) problems.push(`channel ${JSON.stringify(channel)} ${problem}`);
  }
  for (const kind of query.kinds ?? []) {
    if (!SEARCH_KINDS.includes(kind))
      problems.push(`kind ${JSON.stringify(kind)} is not one of ${SEARCH_KINDS.join(", ")}`);
  }
  if (query.status !== undefined && !QUESTION_STATUSES.includes(query.status))
    problems.push(
      `status ${JSON.stringify(query.status)} is not one of ${QUESTION_STATUSES.join(", ")}`,
    );
  for (const [name, value] of [
    ["since", query.since],
    ["until", query.until],
  ] as const) {
    if (value !== undefined && !Number.isFinite(value))
      problems.push(`${name} must be a time (epoch ms)`);
  }
  const author = query.authorId;
  if (author !== undefined && (author === "" || author.length > 200 || /\p{Cc}/u.test(author)))
    problems.push("author must be a platform user id: 1 to 200 characters, no control characters");
  if (problems.length > 0)
    throw new SearchError("SEARCH_BAD_QUERY", `search: ${problems.join("; ")}`);
  return { text, limit, offset };
}

/** The filter of a checked query, or undefined when it filters nothing. */
export function whereClause(filters: SearchFilters): string | undefined {
  const parts: string[] = [];
  const any = (column: string, values: readonly string[]) =>
    values.length === 1
      ? `${column} = ${quote(values[0])}`
      : `${column} IN (${values.map(quote).join(", ")})`;
  if (filters.channels !== undefined && filters.channels.length > 0)
    parts.push(any("channel", filters.channels));
  const kinds =
    filters.status === undefined ? (filters.kinds ?? []) : (["question"] as SearchKind[]);
  if (kinds.length > 0) parts.push(any("kind", kinds));
  if (filters.status !== undefined) parts.push(`status = ${quote(filters.status)}`);
  if (filters.since !== undefined) parts.push(`ts >= ${Math.floor(filters.since)}`);
  if (filters.until !== undefined) parts.push(`ts < ${Math.floor(filters.until)}`);
  if (filters.authorId !== undefined) parts.push(`authorId = ${quote(filters.authorId)}`);
  return parts.length === 0 ? undefined : parts.join(" AND ");
}
