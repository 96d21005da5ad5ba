/**
 * The correction route's Lambda handler: an HTTP API v2 POST in (a body, plain or base64 as API
 * Gateway may send it), the correction recorded on DynamoDB Local, and shown by the reader.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { textMessage } from "convoseg/history";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { describe, expect, it, vi } from "vitest";
import { createMessagesTestTable, createResultsTestTable } from "../knowledge/fixtures.js";
import { question, resultWith, save } from "../knowledge/question-index.js";
import { stubLocalAws } from "../support/aws-env.js";
import { testDynamoDbClient } from "../support/dynamodb.js";

const ROUTE = "/channels/{c}/questions/{id}/correction";

function post(c: string, id: string, body: string, base64 = false) {
  return {
    routeKey: `POST ${ROUTE}`,
    rawPath: `/channels/${c}/questions/${id}/correction`,
    rawQueryString: "",
    headers: { "content-type": "application/json" },
    pathParameters: { c, id },
    requestContext: { http: { method: "POST" } },
    body: base64 ? Buffer.from(body).toString("base64") : body,
    isBase64Encoded: base64,
  } as unknown as APIGatewayProxyEventV2;
}

describe("the api-correction function", () => {
  it("records a correction from API Gateway's event and answers with the question as read", async () => {
    stubLocalAws();
    const client = testDynamoDbClient();
    const resultsTable = await createResultsTestTable(client);
    const messagesTable = await createMessagesTestTable(client);
    const store = new DynamoDbResultStore({ client, tableName: resultsTable });
    await save(store, resultWith("help", "s1", [question("wifi", Date.UTC(2026, 5, 1))]));
    await new DynamoDbStore({ client, tableName: messagesTable }).write("help", [
      textMessage("user", "try 6.8", { id: "m-9", ts: Date.UTC(2026, 5, 1, 1) }),
    ]);
    vi.resetModules();
    vi.stubEnv("RESULTS_TABLE", resultsTable);
    vi.stubEnv("MESSAGES_TABLE", messagesTable);
    vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "true");
    const { handler } = await import("../../functions/api-correction/handler.js");
    const call = async (e: APIGatewayProxyEventV2) =>
      (await handler(e)) as APIGatewayProxyStructuredResultV2;

    const body = JSON.stringify({ action: "answered", answerId: "m-9", by: "U42" });
    const done = await call(post("help", "wifi", body, true));
    expect(done.statusCode, String(done.body)).toBe(200);
    expect(JSON.parse(done.body as string).question).toMatchObject({
      status: "answered",
      answerIds: ["m-9"],
      corrected: true,
    });
    const { items } = await new KnowledgeReader({ store }).questions("help");
    expect(items.map((q) => [q.id, q.status, q.correction?.by])).toEqual([
      ["wifi", "answered", "U42"],
    ]);
    // A message the channel does not have is refused, naming the field.
    const unknown = await call(
      post("help", "wifi", JSON.stringify({ action: "answered", answerId: "m-404" })),
    );
    expect([unknown.statusCode, JSON.parse(unknown.body as string).error.parameter]).toEqual([
      400,
      "body.answerId",
    ]);
    const missing = await call(post("help", "nope", JSON.stringify({ action: "hidden" })));
    expect(missing.statusCode).toBe(404);
  });
});
