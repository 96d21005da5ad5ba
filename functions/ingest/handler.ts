import { Logger } from "@aws-lambda-powertools/logger";
import { IngestClient } from "../../lib/ingest/index.js";
import { PipelineConfigError, readDueShards } from "../../lib/pipeline/index.js";
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
  dueShards: dueShards(),
});

/** The due index's shard count, as the tick reads it: a bad value is named like the others. */
function dueShards(): number {
  try {
    return readDueShards(process.env);
  } catch (error) {
    if (!(error instanceof PipelineConfigError)) throw error;
    throw new Error(`ingest: environment variable ${error.setting} ${error.problem}`);
  }
}

export const handler = createIngestHandler(
  (messages) => client.ingest(messages),
  new Logger({ serviceName: "convoseg-ingest" }),
);
