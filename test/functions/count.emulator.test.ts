import type { DynamoDBStreamEvent } from "aws-lambda";
import { dynamoDbApiSources } from "convoseg/api";
import { createMessagesTable } from "convoseg/history/dynamodb";
import { IngestClient } from "convoseg/ingest";
import { createChannelsTable } from "convoseg/pipeline/schema";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stubLocalAws } from "../support/aws-env.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { enableStream, streamRecords } from "../support/dynamodb-streams.js";

afterEach(() => vi.unstubAllEnvs());

/** The deployed handler module, loaded the way Lambda loads it: configured by environment. */
async function loadHandler(environment: Record<string, string>) {
  vi.resetModules();
  stubLocalAws();
  for (const [name, value] of Object.entries(environment)) vi.stubEnv(name, value);
  return (await import("../../functions/count/handler.js")).handler;
}

describe("the message counter's handler", () => {
  it("counts a channel's kept messages from the stream Lambda hands it, once however often", async () => {
    const client = testDynamoDbClient();
    const messagesTable = `count-fn-${Date.now().toString(36)}`;
    const channelsTable = `${messagesTable}-channels`;
    await createMessagesTable(client, messagesTable);
    await createChannelsTable(client, channelsTable);
    const streamArn = await enableStream(client, messagesTable);
    const ingestion = new IngestClient({ messagesTable, channelsTable, client });
    await ingestion.ingest(
      [1, 2, 3, 4].map((id) => ({ id, ts: 1741000000000 + id, channel: "help", text: `t${id}` })),
    );
    await ingestion.ingest([{ op: "delete", id: 2, channel: "help" }]);
    const event = { Records: await streamRecords(streamArn) } as DynamoDBStreamEvent;
    const handler = await loadHandler({ CHANNELS_TABLE: channelsTable });
    await handler(event);
    // Lambda's retry of the whole batch after a lost answer.
    await handler(event);
    const sources = dynamoDbApiSources({
      client,
      resultsTable: "unused",
      channelsTable,
      messagesTable,
    });
    expect((await sources.describe("help")).messages).toBe(3);
  });

  it("fails its first invocation without its table, naming the variable", async () => {
    await expect(loadHandler({ CHANNELS_TABLE: " " })).rejects.toThrow(
      "count: environment variable CHANNELS_TABLE must be set",
    );
  });
});
