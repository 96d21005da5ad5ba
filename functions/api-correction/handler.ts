/**
 * The API's one write route behind API Gateway (HTTP API, payload 2.0): `POST
 * /channels/{c}/questions/{id}/correction`, a person's correction of a question. The same
 * handler as the read API (`convoseg/api`), given only the correction source, on a function of
 * its own: its role may put items in the results table, which the read function's may not.
 * Authorization is API Gateway's (IAM or JWT) before the function runs. Logs and metrics carry
 * the route, status and code, never the path or the body: those may carry message ids and names.
 */

import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type ApiSources, apiHandler, storeCorrections } from "convoseg/api";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { gatewayHandler, requiredSetting } from "../api-gateway.js";

const required = (name: string) => requiredSetting("api-correction", name);

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

/** @public The Lambda runtime calls it: infra names this file as the function's entry. */
export const handler = gatewayHandler(handle, { log, metrics });
