/**
 * The read API behind API Gateway (HTTP API, payload 2.0): the same handler `npm start -- serve`
 * runs, on the stack's results, channels and messages tables. Authorization is API Gateway's
 * (IAM or JWT) before the function runs. Logs and metrics carry the route, status and read units, never the
 * path, the query or a body: those may carry message text.
 */

import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { apiHandler, dynamoDbApiSources, storeStatsSource } from "convoseg/api";
import { channelDigests, dynamoDbDigestSources } from "convoseg/digest";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { deployedSearchIndex, searchEnvironment } from "convoseg/search/lancedb";
import { gatewayHandler, requiredSetting } from "../api-gateway.js";

const required = (name: string) => requiredSetting("api", name);

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

/** @public The Lambda runtime calls it: infra names this file as the function's entry. */
export const handler = gatewayHandler(handle, {
  log,
  metrics,
  reads: {
    reset: () => {
      units = 0;
      reads = 0;
    },
    read: () => ({ reads, units }),
  },
});
