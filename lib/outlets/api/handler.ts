/**
 * The API as one pure function from a request to a response, over {@link ApiSources}: the
 * Lambda handler (functions/api) and `npm start -- serve` (cli/serve/serve.ts) both put it behind
 * their transport. Every route costs a bounded number of reads: one Scan page of the channels
 * table and two Queries of arrivals a channel listed, one Query of the topic index (in key order)
 * or its whole up to `RANKED_ENTRIES` (ranked), one GetItem, one questions read, or a digest's
 * period. The one write route (a question's correction, POST) is routed apart.
 */
import { createHash } from "node:crypto";
import type { SegmentResult } from "../../knowledge/store/index.js";
import { MARKS_ITEM } from "../../segmentation/pipeline/schema/index.js";
import { correctionBody, correctionRoute } from "./correction-route.js";
import { type CursorCodec, type CursorScope, cursorCodec } from "./cursor.js";
import {
  ApiBodyError,
  ApiError,
  ApiMethodError,
  ApiNotFoundError,
  ApiUnavailableError,
} from "./errors.js";
import { faqRoute } from "./faq-route.js";
import { CHANNEL_LIMITS, QUESTION_LIMITS, RANKED_ENTRIES, TOPIC_SORTS } from "./limits.js";
import { openApiDocument } from "./openapi.js";
import { digestPeriod } from "./period.js";
import type { ApiSources, ChannelsPosition } from "./ports.js";
import {
  enumParameter,
  idParameter,
  limitParameter,
  pathSegments,
  queryParameters,
} from "./request.js";
import {
  API_WRITE_METHODS,
  type ApiRoute,
  matchRoute,
  matchWriteRoute,
  type RouteParameters,
} from "./routes.js";
// Types only: the handler builds its bodies field by field (whatever else a source's items carry
// stays out); test/outlets/api/openapi.test.ts checks every body against the schemas.
import {
  type ApiQuestion,
  type ApiTopic,
  type ChannelsPage,
  DigestBody,
  type ErrorBody,
  type QuestionStatus,
  type QuestionsPage,
  type Segment,
  type TopicsPage,
} from "./schemas.js";
import { searchRoute } from "./search-route.js";
import { statsRoute } from "./stats-route.js";
import {
  entryBudget,
  isRankPosition,
  isTopicKey,
  rankedTopicsPage,
  TOPIC_LIMITS,
  topicsPage,
} from "./topics-page.js";

/** As `schemas.ts` has them. */
const QUESTION_STATUSES: readonly QuestionStatus[] = ["answered", "unanswered", "unclear"];

/** Channels table items a channels page evaluates per channel asked for (marks, state, pages). */
const ITEMS_PER_CHANNEL = 3;

interface ApiRequest {
  method: string;
  /** The body as sent (the write routes'); absent or empty when none. */
  body?: string;
  /** As sent: percent-encoded, without the query string. */
  rawPath: string;
  /** Without the leading `?`; "" when none. */
  rawQuery: string;
  /** Names in lower case. */
  headers: Readonly<Record<string, string | undefined>>;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The route it matched (`GET /channels/{c}/topics`), for logs and metrics: never the path. */
  route: string;
  /** The error code of a 4xx or 5xx. */
  code?: string;
}

export interface ApiHandlerOptions {
  /** Signs cursors (the same on every instance); without it they are checksummed. */
  cursorKey?: string;
  /** The clock the digest route's period ends at (default `Date.now`). */
  now?: () => number;
  /** People never named among the stats route's answerers (names or ids, any case). */
  statsOptOut?: readonly string[];
}

export type ApiHandler = (request: ApiRequest) => Promise<ApiResponse>;

export function apiHandler(sources: ApiSources, options: ApiHandlerOptions = {}): ApiHandler {
  const cursors = cursorCodec(options.cursorKey);
  const now = options.now ?? Date.now;
  return async (request) => {
    let route = "unmatched";
    try {
      const segments = pathSegments(request.rawPath);
      const write = matchWriteRoute(segments);
      if (write !== undefined) {
        route = `${methodLabel(request.method)} ${write.route}`;
        if (request.method !== "POST") throw new ApiMethodError(API_WRITE_METHODS);
        // JSON only: a browser page cannot send it across origins without a preflight, which
        // no server of this API answers (serve has no authentication of its own).
        if (!/^application\/json\s*(;|$)/i.test(request.headers["content-type"] ?? "")) {
          throw new ApiBodyError("content-type", "must be application/json");
        }
        const { c, id } = write.parameters;
        const done = await correctionRoute(sources, request.rawQuery, c, id, request.body);
        return written(route, done);
      }
      const matched = match(segments, now, options.statsOptOut ?? []);
      if (matched === undefined) throw new ApiNotFoundError("route");
      route = `${methodLabel(request.method)} ${matched.route}`;
      if (request.method !== "GET" && request.method !== "HEAD") throw new ApiMethodError();
      const body = await matched.run(sources, cursors, request.rawQuery);
      return withEtag(request, route, body);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return failure(error, route);
    }
  };
}

/** The request's method as logs name it: a method the API knows of, else `OTHER` (sent text). */
function methodLabel(method: string): string {
  return /^(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)$/.test(method) ? method : "OTHER";
}

type Run = (sources: ApiSources, cursors: CursorCodec, rawQuery: string) => Promise<unknown>;

/** What each route runs: every route of `API_ROUTES` has one (tsc checks), and none else. */
const RUNS: Record<
  ApiRoute,
  (parameters: RouteParameters, now: () => number, optOut: readonly string[]) => Run
> = {
  "/channels": () => channels,
  "/channels/{c}/topics":
    ({ c }) =>
    (s, k, q) =>
      topics(s, k, q, c),
  "/channels/{c}/questions":
    ({ c }) =>
    (s, k, q) =>
      questions(s, k, q, c),
  "/channels/{c}/faq":
    ({ c }) =>
    (s, _k, q) =>
      faqRoute(s, q, c, mustBeKnown),
  "/channels/{c}/digest":
    ({ c }, now) =>
    (s, _k, q) =>
      digest(s, q, c, now()),
  "/channels/{c}/stats":
    ({ c }, now, optOut) =>
    (s, _k, q) =>
      statsRoute(s, q, c, { mustBeKnown, now: now(), optOut }),
  "/channels/{c}/segments/{id}":
    ({ c, id }) =>
    (s, _k, q) =>
      segment(s, q, c, id),
  "/search": (_p, now) => (s, k, q) => searchRoute(s, k, q, now()),
  "/openapi.json": () => async (_s, _k, q) => {
    queryParameters(q, []);
    return openApiDocument();
  },
};

function match(
  segments: string[],
  now: () => number,
  optOut: readonly string[],
): { route: string; run: Run } | undefined {
  const matched = matchRoute(segments);
  if (matched === undefined) return undefined;
  return { route: matched.route, run: RUNS[matched.route](matched.parameters, now, optOut) };
}

async function channels(
  sources: ApiSources,
  cursors: CursorCodec,
  rawQuery: string,
): Promise<ChannelsPage> {
  const query = queryParameters(rawQuery, ["limit", "cursor"]);
  const limit = limitParameter(query.get("limit"), CHANNEL_LIMITS);
  const scope: CursorScope = { route: "channels", channel: "", filter: "" };
  const cursor = query.get("cursor");
  const after = cursor === undefined ? null : cursors.decode(scope, cursor, isChannelsPosition);
  const read = await sources.channels({ after, evaluate: limit * ITEMS_PER_CHANNEL });
  // At most `limit`, so that describing them is bounded by it: a cut page goes on after the last
  // kept channel's marks item, in the order the source read them.
  const kept = read.channels.slice(0, limit);
  const next: ChannelsPosition | null =
    kept.length < read.channels.length
      ? { channel: kept[kept.length - 1], item: MARKS_ITEM }
      : read.next;
  const described = await Promise.all(
    kept.sort().map(async (channel) => {
      const { name, platform, first, last, messages } = await sources.describe(channel);
      return { channel, name, platform, messages, first, last };
    }),
  );
  return {
    channels: described,
    cursor: next === null ? null : cursors.encode(scope, next),
  };
}

function isChannelsPosition(value: unknown): value is ChannelsPosition {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const { channel, item, ...rest } = value as Record<string, unknown>;
  return (
    Object.keys(rest).length === 0 &&
    typeof channel === "string" &&
    typeof item === "string" &&
    channel.length >= 1 &&
    channel.length <= 1024 &&
    item.length >= 1 &&
    item.length <= 1024
  );
}

/**
 * A 404 naming the channel when nothing of it is kept: an empty page of a channel that does not
 * exist (a typo, a channel never ingested) is not told apart from a quiet one otherwise.
 */
async function mustBeKnown(sources: ApiSources, channel: string): Promise<void> {
  if (!(await sources.known(channel)))
    throw new ApiNotFoundError(`channel ${JSON.stringify(channel)}`);
}

async function topics(
  sources: ApiSources,
  cursors: CursorCodec,
  rawQuery: string,
  rawChannel: string,
): Promise<TopicsPage> {
  const channel = idParameter("channel", rawChannel);
  const query = queryParameters(rawQuery, ["sort", "limit", "cursor"]);
  const sort = enumParameter("sort", query.get("sort"), TOPIC_SORTS) ?? TOPIC_SORTS[0];
  const limit = limitParameter(query.get("limit"), TOPIC_LIMITS);
  // `key` keeps the filter cursors had before `sort` existed: those still page in key order.
  const scope: CursorScope = { route: "topics", channel, filter: sort === "key" ? "" : sort };
  const cursor = query.get("cursor");
  let page: { topics: ApiTopic[]; after: unknown; complete?: boolean };
  if (sort === "support") {
    const after = cursor === undefined ? null : cursors.decode(scope, cursor, isRankPosition);
    const read = await sources.topicIndex(channel, { max: RANKED_ENTRIES });
    page = rankedTopicsPage(read, limit, after);
  } else {
    const after = cursor === undefined ? null : cursors.decode(scope, cursor, isTopicKey);
    const budget = entryBudget(limit);
    const read = await sources.topicEntries(channel, { afterTopicKey: after, limit: budget });
    page = topicsPage(read, limit, budget);
  }
  if (cursor === undefined && page.topics.length === 0) await mustBeKnown(sources, channel);
  return {
    channel,
    sort,
    topics: page.topics,
    cursor: page.after === null ? null : cursors.encode(scope, page.after),
    ...(page.complete !== undefined && { complete: page.complete }),
  };
}

async function questions(
  sources: ApiSources,
  cursors: CursorCodec,
  rawQuery: string,
  rawChannel: string,
): Promise<QuestionsPage> {
  const channel = idParameter("channel", rawChannel);
  const query = queryParameters(rawQuery, ["status", "limit", "cursor"]);
  const status = enumParameter("status", query.get("status"), QUESTION_STATUSES);
  const limit = limitParameter(query.get("limit"), QUESTION_LIMITS);
  if (sources.questions === undefined) throw new ApiUnavailableError("questions");
  const scope: CursorScope = { route: "questions", channel, filter: status ?? "" };
  const given = query.get("cursor");
  // The reader's own cursor, wrapped: this API vouches for it, so the reader never sees a forgery.
  const inner =
    given === undefined
      ? undefined
      : cursors.decode(scope, given, (p): p is string => typeof p === "string" && p.length <= 512);
  const read = await sources.questions.questions(channel, {
    ...(status && { status }),
    limit,
    ...(inner !== undefined && { cursor: inner }),
  });
  if (given === undefined && read.items.length === 0) await mustBeKnown(sources, channel);
  return {
    channel,
    // Only the contract's fields: whatever else a reader carries stays out of the response.
    questions: read.items.slice(0, limit).map(questionBody),
    cursor: read.cursor === null ? null : cursors.encode(scope, read.cursor),
  };
}

async function digest(
  sources: ApiSources,
  rawQuery: string,
  rawChannel: string,
  now: number,
): Promise<DigestBody> {
  const channel = idParameter("channel", rawChannel);
  const query = queryParameters(rawQuery, ["since", "until"]);
  const period = digestPeriod(query.get("since"), query.get("until"), now);
  if (sources.digest === undefined) throw new ApiUnavailableError("digest");
  // Asked first: a digest reads the period's results, worth a lookup before, not after.
  await mustBeKnown(sources, channel);
  const built = await sources.digest.digest(channel, period);
  // Only the contract's fields (zod drops the rest), and a source's mistake is a 500, not a body.
  return DigestBody.parse(built);
}

async function segment(
  sources: ApiSources,
  rawQuery: string,
  rawChannel: string,
  rawId: string,
): Promise<Segment> {
  const channel = idParameter("channel", rawChannel);
  const segmentId = idParameter("id", rawId);
  queryParameters(rawQuery, []);
  const result = await sources.segment(channel, segmentId);
  if (result === undefined) throw new ApiNotFoundError("segment");
  return segmentBody(result);
}

/** The contract's fields of a question, whatever else the reader's carry. */
function questionBody(q: ApiQuestion): ApiQuestion {
  return {
    ...(q.id !== undefined && { id: q.id }),
    question: q.question,
    askedId: q.askedId,
    askedTs: q.askedTs,
    ...(q.askedBy !== undefined && { askedBy: q.askedBy }),
    status: q.status,
    ...(q.answer !== undefined && { answer: q.answer }),
    answerIds: q.answerIds,
    segmentId: q.segmentId,
    ...(q.threadId !== undefined && { threadId: q.threadId }),
    ...(q.corrected && { corrected: true as const }),
    ...(q.correction !== undefined && { correction: correctionBody(q.correction) }),
  };
}

/** The contract's fields of a stored result: leases, usage, windows and redaction state stay in. */
function segmentBody(result: SegmentResult): Segment {
  return {
    channel: result.channel,
    segmentId: result.segmentId,
    late: result.late,
    belongsAfter: result.belongsAfter,
    count: result.count,
    first: { id: result.first.id, ts: result.first.ts },
    last: { id: result.last.id, ts: result.last.ts },
    messageIds: result.messageIds ?? null,
    model: result.model,
    promptVersion: result.promptVersion,
    extractedAt: result.extractedAt,
    candidates: result.candidates.map((c) => ({
      id: c.id,
      topic: c.topic,
      reason: c.reason,
      confidence: c.confidence,
      tags: c.tags,
      messageIds: c.messageIds,
    })),
  };
}

const JSON_TYPE = "application/json; charset=utf-8";

/** A 200 with a strong ETag of its body, or a 304 when `If-None-Match` already has it. */
function withEtag(request: ApiRequest, route: string, value: unknown): ApiResponse {
  const body = JSON.stringify(value);
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
  const headers = { etag, "cache-control": "private, no-cache", vary: "authorization" };
  if (matchesEtag(request.headers["if-none-match"], etag)) {
    return { status: 304, headers, body: "", route };
  }
  return {
    status: 200,
    headers: { ...headers, "content-type": JSON_TYPE },
    body: request.method === "HEAD" ? "" : body,
    route,
  };
}

/** A write's 200: never cached, no ETag (the next read differs). */
function written(route: string, value: unknown): ApiResponse {
  const headers = { "content-type": JSON_TYPE, "cache-control": "no-store" };
  return { status: 200, headers, body: JSON.stringify(value), route };
}

/** RFC 9110's weak comparison, as If-None-Match uses: `W/` set aside, `*` matches any. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined || header.length > 4096) return false;
  return header
    .split(",")
    .map((tag) => tag.trim().replace(/^W\//, ""))
    .some((tag) => tag === "*" || tag === etag);
}

function failure(error: ApiError, route: string): ApiResponse {
  const body: ErrorBody = {
    error: {
      code: error.code,
      message: error.message,
      ...(error.parameter !== undefined && { parameter: error.parameter }),
    },
  };
  const headers: Record<string, string> = { "content-type": JSON_TYPE };
  if (error instanceof ApiMethodError) headers.allow = error.allowed.join(", ");
  return { status: error.status, headers, body: JSON.stringify(body), route, code: error.code };
}
