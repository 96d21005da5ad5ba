/**
 * What the API's two functions (read and correction) share behind API Gateway (HTTP API,
 * payload 2.0): settings read at cold start, the request as `convoseg/api` takes it, and one
 * response, log line and set of metrics per request, carrying the route, status and code, never
 * the path, the query or a body: those may carry message ids, names and text.
 */

import type { Logger } from "@aws-lambda-powertools/logger";
import { type Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from "aws-lambda";
import type { ApiHandler } from "convoseg/api";

/** A setting read at cold start: a missing one fails the first invocation with its name. */
export function requiredSetting(service: string, name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${service}: ${name} is not set`);
  return value;
}

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

interface GatewayOptions {
  log: Logger;
  metrics: Metrics;
  /** The DynamoDB reads of the request just served (the read function's), logged and published. */
  reads?: { reset(): void; read(): { reads: number; units: number } };
}

/** The Lambda handler serving `handle`; an unexpected error is a 500 naming nothing of the request. */
export function gatewayHandler(handle: ApiHandler, { log, metrics, reads }: GatewayOptions) {
  return async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyResultV2> => {
    reads?.reset();
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
      const cost = reads?.read();
      metrics.addDimension("route", response.route);
      metrics.addMetric("ApiRequests", MetricUnit.Count, 1);
      if (cost !== undefined) {
        metrics.addMetric("ApiReads", MetricUnit.Count, cost.reads);
        metrics.addMetric("ApiReadUnits", MetricUnit.Count, cost.units);
      }
      if (response.status >= 400) metrics.addMetric("ApiErrors", MetricUnit.Count, 1);
      log.info("request", {
        route: response.route,
        status: response.status,
        code: response.code,
        ...cost,
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
  };
}
