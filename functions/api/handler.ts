/**
 * The read API behind API Gateway (HTTP API, payload 2.0): the same handler `npm start -- serve`
 * runs, on the stack's results, channels and messages tables. Authorization is API Gateway's
 * (IAM or JWT) before the function runs. Logs and metrics carry the route, status and read units, never the
 * path, the query or a body: those may carry message text.
 */

import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from "aws-lambda";
import { apiHandler, dynamoDbApiSources, storeStatsSource } from "convoseg/api";
import { channelDigests, dynamoDbDigestSources } from "convoseg/digest";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { deployedSearchIndex, searchEnvironment } from "convoseg/search/lancedb";

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`api: ${name} is not set`);
  return value;
}

const log = new Logger({ serviceName: "convoseg-api" });
const metrics = new Metrics({ namespace: "convoseg", serviceName: "api" });
let units = 0;
let reads = 0;
const client = new DynamoDBClient({});
const resultsTable = required("RESULTS_TABLE");
const messagesTable = required("MESSAGES_TABLE");
const messages = new DynamoDbStore({ client, tableName: messagesTable });
const searchIndex = deployedSearchIndex({
  ...searchEnvironment(process.env),
  // A search may miss what was indexed in the last seconds: each query then lists no versions.
  readConsistencySeconds: 10,
});
// The apiStatsOptOut setting, a JSON array of names or ids (infra/api.ts).
const statsOptOut = JSON.parse(process.env.STATS_OPT_OUT ?? "[]") as string[];
const handle = apiHandler(
  dynamoDbApiSources({
    client,
    resultsTable,
    channelsTable: required("CHANNELS_TABLE"),
    messagesTable,
    questions: new KnowledgeReader({ client, tableName: resultsTable }),
    // Its health table names answerers as the stats route does: never those who opted out.
    digest: channelDigests(dynamoDbDigestSources({ client, resultsTable, messagesTable }), {
      answerers: { optOut: statsOptOut },
    }),
    // The results and the answering messages' facts (when, by whom), as the digest reads them.
    stats: storeStatsSource(new DynamoDbResultStore({ client, tableName: resultsTable }), {
      getMessages: (channel, ids) => messages.messageFacts(channel, ids),
    }),
    // With `SEARCH_INDEX_URI`, GET /search reads the deployed index; without, it answers 501.
    ...(searchIndex && { search: searchIndex }),
    onRead: (cost) => {
      reads++;
      if (Number.isFinite(cost.units)) units += cost.units;
    },
  }),
  { statsOptOut },
);

/**
 * The path as the handler takes it, percent-encoded. An HTTP API hands `rawPath` over already
 * decoded (decoding it again would read a channel `a%41` as `aA`), so it is rebuilt from the
 * matched route and its decoded path parameters, each encoded once.
 */
function encodedPath(event: APIGatewayProxyEventV2): string {
  const [, template] = event.routeKey.split(" ");
  if (template === undefined || !template.startsWith("/")) return event.rawPath;
  return template.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(event.pathParameters?.[name] ?? ""),
  );
}

/** @public The Lambda runtime calls it: infra names this file as the function's entry. */
export async function handler(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyResultV2> {
  units = 0;
  reads = 0;
  try {
    const response = await handle({
      method: event.requestContext.http.method,
      rawPath: encodedPath(event),
      rawQuery: event.rawQueryString ?? "",
      headers: event.headers ?? {},
    });
    metrics.addDimension("route", response.route);
    metrics.addMetric("ApiRequests", MetricUnit.Count, 1);
    metrics.addMetric("ApiReads", MetricUnit.Count, reads);
    metrics.addMetric("ApiReadUnits", MetricUnit.Count, units);
    if (response.status >= 400) metrics.addMetric("ApiErrors", MetricUnit.Count, 1);
    log.info("request", {
      route: response.route,
      status: response.status,
      code: response.code,
      reads,
      units,
    });
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
