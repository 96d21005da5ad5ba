import { Logger } from "@aws-lambda-powertools/logger";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDbStore } from "../../lib/history/dynamodb/store.js";
import { ChannelStore } from "../../lib/pipeline/channel-store.js";
import { createIngestHandler } from "./ingest-handler.js";

/** Read once at cold start: a missing setting fails the first invocation with its name. */
function requiredEnvironment(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`ingest: environment variable ${name} must be set`);
  return value;
}

const client = new DynamoDBClient({});
const store = new DynamoDbStore({ client, tableName: requiredEnvironment("MESSAGES_TABLE") });
const channels = new ChannelStore({ client, tableName: requiredEnvironment("CHANNELS_TABLE") });

export const handler = createIngestHandler(store, new Logger({ serviceName: "convoseg-ingest" }), {
  markArrivals: (channel) => channels.markArrivals(channel, Date.now()),
});
