import { Logger } from "@aws-lambda-powertools/logger";
import { IngestClient } from "../../lib/ingest/index.js";
import { createIngestHandler } from "./ingest-handler.js";

/** Read once at cold start: a missing setting fails the first invocation with its name. */
function requiredEnvironment(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`ingest: environment variable ${name} must be set`);
  return value;
}

const client = new IngestClient({
  messagesTable: requiredEnvironment("MESSAGES_TABLE"),
  channelsTable: requiredEnvironment("CHANNELS_TABLE"),
});

export const handler = createIngestHandler(
  (messages) => client.ingest(messages),
  new Logger({ serviceName: "convoseg-ingest" }),
);
