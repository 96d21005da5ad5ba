/**
 * The API's one write route behind API Gateway (HTTP API, payload 2.0): `POST
 * /channels/{c}/questions/{id}/correction`, a person's correction of a question. The same
 * handler as the read API (`convoseg/api`), given only the correction source, on a function of
 * its own: its role may put items in the results table, which the read function's may not.
 * Authorization is API Gateway's (IAM or JWT) before the function runs. Logs and metrics carry
 * the route, status and code, never the path or the body: those may carry message ids and names.
 */

import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from "aws-lambda";
import { type ApiSources, apiHandler, storeCorrections } from "convoseg/api";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { DynamoDbResultStore } from "convoseg/knowledge/store";

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`api-correction: ${name} is not set`);
  return value;
}

const log = new Logger({ serviceName: "convoseg-api-correction" });
const metrics = new Metrics({ namespace: "convoseg", serviceName: "api" });
const client = new DynamoDBClient({});
const messages = new DynamoDbStore({ client, tableName: required("MESSAGES_TABLE") });
const store = new DynamoDbResultStore({ client, tableName: required("RESULTS_TABLE") });

/** Only the correction source: every read route here is a 404 (API Gateway sends none). */
const refused = async (): Promise<never> => {
  throw new Error("api-correction: only the correction route is served here");
};
const handle = apiHandler({
  channels: refused,
  topicEntries: refused,
  describe: refused,
  topicIndex: refused,
  known: refused,
  segment: refused,
  // The answering message must be the channel's and not deleted: its facts, never its text.
  corrections: storeCorrections(store, {
    messages: { getMessages: (channel, ids) => messages.messageFacts(channel, ids) },
  }),
} satisfies ApiSources);

/** The path as the handler takes it, percent-encoded, from the route and its parameters. */
function encodedPath(event: APIGatewayProxyEventV2): string {
  const [, template] = event.routeKey.split(" ");
  if (template === undefined || !template.startsWith("/")) return event.rawPath;
  return template.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(event.pathParameters?.[name] ?? ""),
  );
}

/** @public The Lambda runtime calls it: infra names this file as the function's entry. */
export async function handler(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyResultV2> {
  try {
    const body =
      event.body === undefined
        ? undefined
        : event.isBase64Encoded
          ? Buffer.from(event.body, "base64").toString("utf8")
          : event.body;
    const response = await handle({
      method: event.requestContext.http.method,
      rawPath: encodedPath(event),
      rawQuery: event.rawQueryString ?? "",
      headers: event.headers ?? {},
      ...(body !== undefined && { body }),
    });
    metrics.addDimension("route", response.route);
    metrics.addMetric("ApiRequests", MetricUnit.Count, 1);
    if (response.status >= 400) metrics.addMetric("ApiErrors", MetricUnit.Count, 1);
    log.info("request", { route: response.route, status: response.status, code: response.code });
    return { statusCode: response.status, headers: response.headers, body: response.body };
  } catch (error) {
    // The error's name and code only: a message may quote an item.
    log.error("failed", { name: (error as Error).name, code: (error as { code?: string }).code });
    metrics.addMetric("ApiFailures", MetricUnit.Count, 1);
    return {
      statusCode: 500,
      headers: { "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({ error: { code: "API_INTERNAL", message: "internal error" } }),
    };
  } finally {
    if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  }
}
