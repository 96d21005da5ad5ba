/**
 * What the three ask endpoints' Lambdas share: their settings read at cold start, the rate limit
 * in the warm function's memory, the question handed to the answer function by an asynchronous
 * invocation (so that the platform is answered within its 3 seconds, whatever the search takes),
 * counts as EMF metrics, and the Function URL event as the raw body it was signed as.
 */

import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { InvokeCommand, LambdaClient } from "@aws-sdk/client-lambda";
import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from "aws-lambda";
import {
  AskRateLimit,
  type AskReceiverOptions,
  type HttpRequest,
  type HttpResponse,
} from "convoseg/connectors";
import { chatScopeFrom, functionUrlHandler, requiredEnvironment } from "./webhook-receiver.js";

const positive = (name: string): number | undefined => {
  const value = process.env[name];
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new Error(`ask: environment variable ${name} must be a whole number >= 1 (got ${value})`);
  }
  return n;
};

/**
 * The parts every ask endpoint takes, from ANSWER_FUNCTION (the answer function's name),
 * MARK_FUNCTION (the mark function's, with askMarkers), ASK_CHANNELS (the channels answered in, comma-separated; unset: every group chat),
 * PRIVATE_CHATS, ASK_PER_PERSON and ASK_PER_CHANNEL (questions a minute); and its handler.
 */
export function askFunction(platform: "slack" | "discord" | "telegram"): {
  parts: AskReceiverOptions;
  handler: (
    receive: (request: HttpRequest) => Promise<HttpResponse>,
  ) => (event: LambdaFunctionURLEvent) => Promise<LambdaFunctionURLResult>;
} {
  const answerFunction = requiredEnvironment(`${platform} ask`, "ANSWER_FUNCTION");
  const metrics = new Metrics({ namespace: "convoseg", serviceName: `${platform}-ask` });
  const lambda = new LambdaClient({});
  const perPerson = positive("ASK_PER_PERSON");
  const perChannel = positive("ASK_PER_CHANNEL");
  // An Event invocation is queued by Lambda and answered 202 at once.
  const invoke = (functionName: string) => async (request: unknown) => {
    await lambda.send(
      new InvokeCommand({
        FunctionName: functionName,
        InvocationType: "Event",
        Payload: Buffer.from(JSON.stringify(request)),
      }),
    );
  };
  const markFunction = process.env.MARK_FUNCTION || undefined;
  const parts: AskReceiverOptions = {
    ask: invoke(answerFunction),
    // With askMarkers: "Mark as answer" goes to the function that may write corrections.
    ...(markFunction !== undefined && { mark: invoke(markFunction) }),
    limit: new AskRateLimit({
      ...(perPerson !== undefined && { perPerson }),
      ...(perChannel !== undefined && { perChannel }),
    }),
    scope: chatScopeFrom("ASK_CHANNELS"),
    metrics: { add: (name, value) => metrics.addMetric(name, MetricUnit.Count, value) },
    log: new Logger({ serviceName: `convoseg-${platform}-ask` }),
  };
  return { parts, handler: functionUrlHandler(metrics) };
}
