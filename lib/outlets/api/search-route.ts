/**
 * `GET /search`: a query's hits, best first, a page at a time, over the sources' search index.
 * `channel` and `kind` may be given more than once; every other parameter once. A cursor is
 * bound to the query it was issued for.
 */
import { parseTime } from "../../base/duration/index.js";
import {
  MAX_OFFSET,
  QUESTION_STATUSES,
  SEARCH_KINDS,
  type SearchKind,
  type SearchQuery,
} from "../search/index.js";
import type { CursorCodec, CursorScope } from "./cursor.js";
import { ApiParameterError, ApiUnavailableError } from "./errors.js";
import { MAX_SEARCH_CHANNELS, SEARCH_LIMITS } from "./limits.js";
import type { ApiSources } from "./ports.js";
import { enumParameter, idParameter, limitParameter, queryParameters } from "./request.js";
import type { SearchPage } from "./schemas.js";

/** The longest query, in characters (`lib/outlets/search` takes up to 500). */
const MAX_Q_CHARS = 500;

/** A time parameter: a duration back from `now` (30d, 12h, 2w) or an ISO date or zoned time. */
function timeParameter(name: string, value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const time = parseTime(value, now);
  if (time !== undefined) return time.at;
  throw new ApiParameterError(
    name,
    "must be a duration back from now (30d, 12h, 2w; at most 365d) or an ISO date or zoned time",
  );
}

/** `name`'s values, each given as its own parameter, at most `max`. */
function repeated(search: URLSearchParams, name: string, max: number): string[] {
  const values = search.getAll(name);
  if (values.length > max) throw new ApiParameterError(name, `given more than ${max} times`);
  search.delete(name);
  return values;
}

export async function searchRoute(
  sources: ApiSources,
  cursors: CursorCodec,
  rawQuery: string,
  now: number,
): Promise<SearchPage> {
  // Checked for its length and unknown names with the rest; the repeated ones are taken out first.
  const search = new URLSearchParams(rawQuery.length > 2048 ? "" : rawQuery);
  const channels = repeated(search, "channel", MAX_SEARCH_CHANNELS).map((c) =>
    idParameter("channel", c),
  );
  const kinds = repeated(search, "kind", SEARCH_KINDS.length).map(
    (k) => enumParameter("kind", k, SEARCH_KINDS) as SearchKind,
  );
  const query = queryParameters(rawQuery.length > 2048 ? rawQuery : search.toString(), [
    "q",
    "status",
    "since",
    "until",
    "author",
    "limit",
    "cursor",
  ]);
  const text = (query.get("q") ?? "").trim();
  if (text === "") throw new ApiParameterError("q", "required: the words to look for");
  if (text.length > MAX_Q_CHARS)
    throw new ApiParameterError("q", `longer than ${MAX_Q_CHARS} characters`);
  const status = enumParameter("status", query.get("status"), QUESTION_STATUSES);
  const since = timeParameter("since", query.get("since"), now);
  const until = timeParameter("until", query.get("until"), now);
  const author = query.get("author");
  if (author !== undefined) idParameter("author", author);
  const limit = limitParameter(query.get("limit"), SEARCH_LIMITS);
  if (sources.search === undefined) throw new ApiUnavailableError("search");
  const asked: SearchQuery = {
    text,
    channels: [...new Set(channels)].sort(),
    kinds: [...new Set(kinds)].sort(),
    ...(status !== undefined && { status }),
    ...(since !== undefined && { since }),
    ...(until !== undefined && { until }),
    ...(author !== undefined && { authorId: author }),
  };
  // A cursor reads on the query it was issued for, and no other.
  const scope: CursorScope = { route: "search", channel: "", filter: JSON.stringify(asked) };
  const given = query.get("cursor");
  const offset =
    given === undefined
      ? 0
      : cursors.decode(
          scope,
          given,
          (p): p is number =>
            Number.isInteger(p) && (p as number) > 0 && (p as number) <= MAX_OFFSET,
        );
  // One past the page: it tells whether another follows.
  const hits = await sources.search.search({ ...asked, limit: limit + 1, offset });
  const next = offset + limit;
  return {
    hits: hits.slice(0, limit).map((hit) => ({
      kind: hit.kind,
      id: hit.id,
      channel: hit.channel,
      ts: hit.ts,
      author: hit.author,
      authorId: hit.authorId,
      title: hit.title,
      status: hit.status,
      segment: hit.segment,
      evidence: hit.evidence,
      permalink: hit.permalink,
      score: hit.score,
      snippet: hit.snippet,
      marks: hit.marks,
    })),
    cursor: hits.length > limit && next <= MAX_OFFSET ? cursors.encode(scope, next) : null,
  };
}
