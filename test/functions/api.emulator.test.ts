/** The read API's Lambda handler: an HTTP API v2 event in, the handler's response out, on DynamoDB Local. */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { channelsTableDefinition } from "convoseg/pipeline/schema";
import { describe, expect, it, vi } from "vitest";
import { seededChannel, writeSeededChannel } from "../../bench/api-seed.js";
import { createMessagesTestTable, createResultsTestTable } from "../knowledge/fixtures.js";
import { stubLocalAws } from "../support/aws-env.js";
import { createTestTable, testDynamoDbClient } from "../support/dynamodb.js";

/** An HTTP API event as API Gateway sends it: `rawPath` decoded, the route and its parameters. */
function event(method: string, rawPath: string, rawQueryString = "", headers = {}) {
  const [, , c, kind, id] = rawPath.split("/");
  const route =
    kind === undefined ? "/channels" : `/channels/{c}/${kind}${id === undefined ? "" : "/{id}"}`;
  return {
    routeKey: `${method} ${route}`,
    rawPath: decodeURIComponent(rawPath),
    rawQueryString,
    headers,
    pathParameters: {
      ...(c !== undefined && { c: decodeURIComponent(c) }),
      ...(id !== undefined && { id: decodeURIComponent(id) }),
    },
    requestContext: { http: { method } },
  } as unknown as APIGatewayProxyEventV2;
}

describe("the api function", () => {
  it("answers API Gateway's events with the handler's pages, errors and 304s", async () => {
    stubLocalAws();
    const client = testDynamoDbClient();
    const resultsTable = await createResultsTestTable(client);
    const { TableName: _, ...channels } = channelsTableDefinition("unused");
    const channelsTable = await createTestTable(client, channels, "channels");
    const seeded = seededChannel("help", 50, 10);
    await writeSeededChannel(client, { resultsTable, channelsTable }, "help", seeded);
    vi.resetModules();
    vi.stubEnv("RESULTS_TABLE", resultsTable);
    vi.stubEnv("CHANNELS_TABLE", channelsTable);
    vi.stubEnv("MESSAGES_TABLE", await createMessagesTestTable(client));
    vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "true");
    const { handler } = await import("../../functions/api/handler.js");
    const call = async (e: APIGatewayProxyEventV2) =>
      (await handler(e)) as APIGatewayProxyStructuredResultV2;

    const page = await call(event("GET", "/channels/help/topics", "limit=3"));
    expect(page.statusCode).toBe(200);
    const body = JSON.parse(page.body as string);
    expect(body.topics).toHaveLength(3);
    const etag = (page.headers as Record<string, string>).etag;
    const again = await call(
      event("GET", "/channels/help/topics", "limit=3", { "if-none-match": etag }),
    );
    expect(again.statusCode).toBe(304);
    const segment = await call(
      event("GET", `/channels/help/segments/${seeded.results[0].segmentId}`),
    );
    expect(JSON.parse(segment.body as string).messageIds).toEqual(seeded.results[0].messageIds);
    // Decoded once by API Gateway, never twice: "a%41" is a channel of its own, not "aA".
    const literal = await call(event("GET", `/channels/${encodeURIComponent("help%41")}/topics`));
    // Nothing is kept of it: a 404 naming the channel as it was meant, decoded once.
    expect([literal.statusCode, JSON.parse(literal.body as string).error.message]).toEqual([
      404,
      'channel "help%41" not found',
    ]);
    const digest = await call(event("GET", "/channels/help/digest", "since=7d"));
    expect([digest.statusCode, JSON.parse(digest.body as string).channels]).toEqual([
      200,
      ["help"],
    ]);
    const bad = await call(event("GET", "/channels/help/topics", "cursor=nope"));
    expect([bad.statusCode, JSON.parse(bad.body as string).error.parameter]).toEqual([
      400,
      "cursor",
    ]);
  });
});
