/**
 * The OpenAPI 3.1 document of the read API, built from the zod schemas (`schemas.ts`) and the
 * routes' parameters and limits, so that docs/contracts/openapi.json is generated, never edited
 * (test/outlets/api/openapi.test.ts fails when the committed file is stale).
 */
import { z } from "zod";
import { MAX_CURSOR_CHARS } from "./cursor.js";
import {
  CHANNEL_LIMITS,
  DIGEST_PERIOD,
  FAQ_LIMITS,
  FAQ_QUESTIONS,
  MAX_SEARCH_CHANNELS,
  QUESTION_LIMITS,
  RANKED_ENTRIES,
  SEARCH_LIMITS,
  STATS_ANSWERS,
  STATS_BUCKETS,
  TOPIC_SORTS,
} from "./limits.js";
import { type Limits, MAX_ID_CHARS } from "./request.js";
import { API_ROUTES, API_WRITE_ROUTES, type ApiRoute, type ApiWriteRoute } from "./routes.js";
import { apiSchemas, QUESTION_STATUSES } from "./schemas.js";
import { TOPIC_LIMITS } from "./topics-page.js";

const DIGEST_DAYS = DIGEST_PERIOD.maxMs / 86_400_000;
/** The forms `since` and `until` take: a duration with its unit, or an ISO date or zoned time. */
const PERIOD_TIME =
  "^(\\d+(\\.\\d+)?[smhdw]|\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,3})?)?(Z|[+-]\\d{2}:\\d{2}))?)$";

/** The forms search's `since` and `until` take: a duration (no weeks) or an ISO date or zoned time. */
const SEARCH_TIME =
  "^(\\d+(\\.\\d+)?[smhd]|\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,3})?)?(Z|[+-]\\d{2}:\\d{2}))?)$";

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

/** The digest's and the stats' period, `?since=` and `?until=`. */
const PERIOD = [
  {
    name: "since",
    in: "query",
    description: `where the period begins: a duration back from until (default 7d) or an ISO date (UTC midnight) or zoned time; the period is from 1h to ${DIGEST_DAYS}d, else a 400`,
    schema: { type: "string", default: "7d", pattern: PERIOD_TIME },
  },
  {
    name: "until",
    in: "query",
    description:
      "where the period ends, excluded: a duration back from now or an ISO date or zoned time (default now, rounded down to the minute)",
    schema: { type: "string", pattern: PERIOD_TIME },
  },
];

const idParameter = (name: string, description: string) => ({
  name,
  in: "path",
  required: true,
  description,
  schema: { type: "string", minLength: 1, maxLength: MAX_ID_CHARS },
});
const CHANNEL = idParameter("c", "the channel id (percent-encoded)");
const limit = (limits: Limits) => ({
  name: "limit",
  in: "query",
  description: `items per page (default ${limits.default})`,
  schema: { type: "integer", minimum: 1, maximum: limits.max, default: limits.default },
});
const CURSOR = {
  name: "cursor",
  in: "query",
  description:
    "the previous page's cursor; a cursor not issued for this route, channel and filter is a 400",
  schema: { type: "string", maxLength: MAX_CURSOR_CHARS },
};
const IF_NONE_MATCH = {
  name: "If-None-Match",
  in: "header",
  description: "an ETag of an earlier response: 304 when the body has not changed",
  schema: { type: "string" },
};

const errors = Object.fromEntries(
  [
    ["400", "a parameter is malformed, unknown, repeated or too long (the body names it)"],
    ["404", "no such route, channel (nothing of it is kept) or segment"],
    ["405", "a method other than GET and HEAD"],
  ].map(([status, description]) => [
    status,
    { description, content: { "application/json": { schema: ref("Error") } } },
  ]),
);

const ok = (schema: string) => ({
  "200": {
    description: "the page (ETag header set)",
    headers: { ETag: { schema: { type: "string" } } },
    content: { "application/json": { schema: ref(schema) } },
  },
  "304": { description: "not modified since the ETag given in If-None-Match" },
  ...errors,
  "403": { description: "refused by the deployed API's authorizer (IAM, or JWT when configured)" },
});

/**
 * `schema` without `additionalProperties: false`: fields may be added within version 1 of the
 * API and clients ignore the fields they do not know, as the results table's readers do.
 */
function open(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(open);
  if (typeof schema !== "object" || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key, value]) => !(key === "additionalProperties" && value === false))
      .map(([key, value]) => [key, open(value)]),
  );
}

/** Each route's GET (HEAD answers the same, without the body): every route has one (tsc checks). */
const OPERATIONS: Record<ApiRoute, Record<string, unknown>> = {
  "/channels": {
    operationId: "listChannels",
    parameters: [limit(CHANNEL_LIMITS), CURSOR, IF_NONE_MATCH],
    responses: ok("ChannelsPage"),
  },
  "/channels/{c}/topics": {
    operationId: "listTopics",
    description:
      `sort=support (the default) reads the channel's whole topic index, up to ${RANKED_ENTRIES} ` +
      "entries, and ranks it; sort=key reads one Query a page, in topic key order.",
    parameters: [
      CHANNEL,
      {
        name: "sort",
        in: "query",
        description:
          "support: most supported first (then best confidence, then latest), over the whole index; key: topic key order (a hash), one bounded read a page",
        schema: { type: "string", enum: [...TOPIC_SORTS], default: TOPIC_SORTS[0] },
      },
      limit(TOPIC_LIMITS),
      CURSOR,
      IF_NONE_MATCH,
    ],
    responses: ok("TopicsPage"),
  },
  "/channels/{c}/questions": {
    operationId: "listQuestions",
    parameters: [
      CHANNEL,
      {
        name: "status",
        in: "query",
        schema: { type: "string", enum: [...QUESTION_STATUSES] },
      },
      limit(QUESTION_LIMITS),
      CURSOR,
      IF_NONE_MATCH,
    ],
    responses: {
      ...ok("QuestionsPage"),
      "501": {
        description: "this deployment has no questions index yet",
        content: { "application/json": { schema: ref("Error") } },
      },
    },
  },
  "/channels/{c}/faq": {
    operationId: "listFaq",
    description:
      "Grouped on request from the channel's questions index, read whole up to " +
      `${FAQ_QUESTIONS.toLocaleString("en")} questions (complete says whether it was): questions asked by at least two people ` +
      "in other words, by most people first. docs/commands.md#faq.",
    parameters: [CHANNEL, limit(FAQ_LIMITS), IF_NONE_MATCH],
    responses: {
      ...ok("FaqPage"),
      "501": {
        description: "this deployment has no questions index yet",
        content: { "application/json": { schema: ref("Error") } },
      },
    },
  },
  "/channels/{c}/digest": {
    operationId: "getDigest",
    description:
      "Built on request from the channel's results and index entries within the period: " +
      `not one read, bounded by the period's length (at most ${DIGEST_DAYS} days) and what it ` +
      "holds. The period is [since, until); give dates for imported history, which ended long ago.",
    parameters: [CHANNEL, ...PERIOD, IF_NONE_MATCH],
    responses: {
      ...ok("Digest"),
      "501": {
        description: "this deployment does not build digests",
        content: { "application/json": { schema: ref("Error") } },
      },
    },
  },
  "/channels/{c}/stats": {
    operationId: "getStats",
    description:
      "The channel's health over the period [since, until), computed on request: its questions index read whole " +
      `up to ${FAQ_QUESTIONS.toLocaleString("en")} questions, the answering messages by id (at most ` +
      `${STATS_ANSWERS.toLocaleString("en")}) and its results' first messages (complete says whether all was read).`,
    parameters: [
      CHANNEL,
      ...PERIOD,
      {
        name: "bucket",
        in: "query",
        description: "what the figures over time are grouped by: UTC days or ISO weeks",
        schema: { type: "string", enum: [...STATS_BUCKETS], default: STATS_BUCKETS[0] },
      },
      IF_NONE_MATCH,
    ],
    responses: {
      ...ok("StatsPage"),
      "501": {
        description:
          "this deployment has no questions index, or cannot read results and messages for it",
        content: { "application/json": { schema: ref("Error") } },
      },
    },
  },
  "/channels/{c}/segments/{id}": {
    operationId: "getSegment",
    parameters: [CHANNEL, idParameter("id", "the segment id"), IF_NONE_MATCH],
    responses: ok("Segment"),
  },
  "/search": {
    operationId: "search",
    description:
      "Messages, conversation segments, topics and questions matching the words of q, best first (BM25, English stemming; q is words, never query syntax). docs/search.md.",
    parameters: [
      {
        name: "q",
        in: "query",
        required: true,
        description: "the words to look for",
        schema: { type: "string", minLength: 1, maxLength: 500 },
      },
      {
        name: "channel",
        in: "query",
        description: `only these channels (ids): the parameter once per channel, at most ${MAX_SEARCH_CHANNELS}`,
        style: "form",
        explode: true,
        schema: {
          type: "array",
          maxItems: MAX_SEARCH_CHANNELS,
          items: { type: "string", minLength: 1, maxLength: MAX_ID_CHARS },
        },
      },
      {
        name: "kind",
        in: "query",
        description: "only these kinds: the parameter once per kind",
        style: "form",
        explode: true,
        schema: {
          type: "array",
          items: { type: "string", enum: ["message", "conversation", "topic", "question"] },
        },
      },
      {
        name: "status",
        in: "query",
        description: "only questions of this status",
        schema: { type: "string", enum: [...QUESTION_STATUSES] },
      },
      {
        name: "since",
        in: "query",
        description:
          "only from this time: a duration back from now (30d, 12h, 2w; at most 365d) or an ISO date or zoned time",
        schema: { type: "string", pattern: SEARCH_TIME },
      },
      {
        name: "until",
        in: "query",
        description: "only before this time, the same way",
        schema: { type: "string", pattern: SEARCH_TIME },
      },
      {
        name: "author",
        in: "query",
        description: "only what this person (platform user id) wrote or asked",
        schema: { type: "string", minLength: 1, maxLength: MAX_ID_CHARS },
      },
      limit(SEARCH_LIMITS),
      CURSOR,
      IF_NONE_MATCH,
    ],
    responses: {
      ...ok("SearchPage"),
      "501": {
        description: "this deployment keeps no search index (deployed without the search setting)",
        content: { "application/json": { schema: ref("Error") } },
      },
    },
  },
  "/openapi.json": {
    operationId: "getOpenApiDocument",
    description: "This document, as the API serves it.",
    parameters: [IF_NONE_MATCH],
    responses: {
      "200": {
        description: "the document (ETag header set)",
        headers: { ETag: { schema: { type: "string" } } },
        content: { "application/json": { schema: { type: "object" } } },
      },
      "304": { description: "not modified since the ETag given in If-None-Match" },
      ...errors,
    },
  },
};

/** Each write route's POST: its own function where deployed, with the one write grant it needs. */
const WRITES: Record<ApiWriteRoute, Record<string, unknown>> = {
  "/channels/{c}/questions/{id}/correction": {
    operationId: "correctQuestion",
    description:
      "A person's correction of a question: answered (by answerId, a message of the channel), reopen (unanswered) or hidden (in no read). It wins over the model's status and answer in every read, before and after any re-extraction, and replaces the question's earlier correction. docs/api.md#corrections.",
    parameters: [CHANNEL, idParameter("id", "the question's id (Question.id)")],
    requestBody: {
      required: true,
      content: { "application/json": { schema: ref("CorrectionBody") } },
    },
    responses: {
      "200": {
        description: "recorded (never cached)",
        content: { "application/json": { schema: ref("CorrectionResult") } },
      },
      "400": {
        description:
          "the body is not JSON, or a field is missing, unknown or malformed (parameter names it: body.action)",
        content: { "application/json": { schema: ref("Error") } },
      },
      "404": {
        description: "no such route, or no question of this id in the channel",
        content: { "application/json": { schema: ref("Error") } },
      },
      "405": {
        description: "a method other than POST",
        content: { "application/json": { schema: ref("Error") } },
      },
      "501": {
        description: "this server may not write (the deployed read function alone)",
        content: { "application/json": { schema: ref("Error") } },
      },
      "403": {
        description: "refused by the deployed API's authorizer (IAM, or JWT when configured)",
      },
    },
  },
};

/** HEAD of a route: its GET's headers and status, no body. */
const head = (operation: Record<string, unknown>) => ({
  ...operation,
  operationId: `${String(operation.operationId)}Head`,
  description: "As GET, without the body.",
});

export function openApiDocument(): Record<string, unknown> {
  const { schemas } = z.toJSONSchema(apiSchemas, {
    target: "draft-2020-12",
    uri: (id) => `#/components/schemas/${id}`,
  });
  const components = Object.fromEntries(
    Object.entries(schemas).map(([id, schema]) => {
      const { $schema: _schema, $id: _id, ...rest } = schema as Record<string, unknown>;
      return [id, open(rest)];
    }),
  );
  return {
    openapi: "3.1.0",
    info: {
      title: "convoseg read API",
      version: "1",
      description:
        "What extraction stored, read with a bounded number of DynamoDB reads per request. See docs/api.md.",
    },
    servers: [
      { url: "http://127.0.0.1:8787", description: "npm start -- serve (the local workspace)" },
      {
        url: "https://{api}.execute-api.{region}.amazonaws.com",
        description: "the deployed HTTP API (the stack's ApiUrl output)",
        variables: { api: { default: "api-id" }, region: { default: "us-east-1" } },
      },
    ],
    // Deployed: IAM (SigV4-signed requests), or a JWT when apiJwtIssuer is set; serve: none.
    security: [{ sigv4: [] }, { jwt: [] }, {}],
    // In the routes' own order: each route is described once, and only the routes are.
    paths: Object.fromEntries([
      ...API_ROUTES.map((route) => [
        route,
        { get: OPERATIONS[route], head: head(OPERATIONS[route]) },
      ]),
      ...API_WRITE_ROUTES.map((route) => [route, { post: WRITES[route] }]),
    ]),
    components: {
      schemas: components,
      securitySchemes: {
        sigv4: {
          type: "apiKey",
          name: "Authorization",
          in: "header",
          description: "an AWS Signature Version 4 signed request (the API is IAM-authorized)",
        },
        jwt: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "with apiJwtIssuer: a token of that issuer and audience",
        },
      },
    },
  };
}
