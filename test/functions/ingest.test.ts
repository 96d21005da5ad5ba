import type { SQSEvent, SQSRecord } from "aws-lambda";
import { beforeAll, describe, expect, inject, it, vi } from "vitest";
import { createMessagesTable, DynamoDbStore, textMessage } from "../../lib/history/index.js";
import type { IngestResult } from "../../lib/ingest/index.js";
import { createChannelsTable, DynamoDbChannelStore } from "../../lib/pipeline/index.js";
import { testDynamoDbClient } from "../support/dynamodb.js";

const T = Date.UTC(2025, 2, 3, 8);
const tableName = `ingest-${Date.now().toString(36)}`;
const channelsTable = `${tableName}-channels`;
const client = testDynamoDbClient();
const store = new DynamoDbStore({ client, tableName });

/** The deployed handler module, loaded the way Lambda loads it: configured by environment. */
async function loadHandler(environment: Record<string, string | undefined>) {
  vi.resetModules();
  for (const [name, value] of Object.entries(environment)) vi.stubEnv(name, value);
  return (await import("../../functions/ingest/handler.js")).handler;
}

const awsEnvironment = () => ({
  AWS_ENDPOINT_URL_DYNAMODB: inject("dynamodbEndpoint"),
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "test",
  AWS_SECRET_ACCESS_KEY: "test",
  MESSAGES_TABLE: tableName,
  CHANNELS_TABLE: channelsTable,
});

const record = (messageId: string, body: string): SQSRecord =>
  ({
    messageId,
    body,
    receiptHandle: messageId,
    attributes: {},
    messageAttributes: {},
  }) as SQSRecord;

beforeAll(async () => {
  await createMessagesTable(client, tableName);
  await createChannelsTable(client, channelsTable);
});

describe("ingest Lambda", () => {
  it("fails at cold start, naming the missing setting", async () => {
    await expect(loadHandler({ ...awsEnvironment(), MESSAGES_TABLE: "" })).rejects.toThrow(
      "ingest: environment variable MESSAGES_TABLE must be set",
    );
  });

  it("writes a direct batch and reports each invalid message, writing the valid ones", async () => {
    const handler = await loadHandler(awsEnvironment());
    const result = (await handler({
      messages: [
        { id: "d1", ts: T, channel: "direct", user: "ana", text: "hello" },
        { id: "d2", channel: "direct" },
        { id: "d3", ts: T + 1, channel: "direct", text: "world" },
      ],
    })) as IngestResult;
    expect(result.stored).toEqual([0, 2]);
    expect(result.rejected).toEqual([{ index: 1, field: "ts", problem: expect.any(String) }]);
    const channels = new DynamoDbChannelStore({ client, tableName: channelsTable });
    expect((await channels.load("direct")).marks).toMatchObject({ marks: 1, holds: [] });
    expect(await store.read("direct")).toEqual([
      textMessage("user", "hello", { id: "d1", ts: T, author: "ana" }),
      textMessage("user", "world", { id: "d3", ts: T + 1 }),
    ]);
  });

  it("reports failed SQS records for retry and stores re-delivered records once", async () => {
    const handler = await loadHandler(awsEnvironment());
    const event: SQSEvent = {
      Records: [
        record("r1", JSON.stringify({ id: "s1", ts: T, channel: "queue", text: "a" })),
        record("r2", "{broken"),
        record("r3", JSON.stringify({ id: "s2", ts: T, channel: "queue", text: "b" })),
        record("r4", JSON.stringify({ id: "s3", ts: "soon", channel: "queue" })),
      ],
    };
    expect(await handler(event)).toEqual({
      batchItemFailures: [{ itemIdentifier: "r2" }, { itemIdentifier: "r4" }],
    });
    // SQS delivers at least once: the same records again change nothing.
    await handler({ Records: [event.Records[0], event.Records[2]] });
    expect((await store.read("queue")).map((m) => m.id)).toEqual(["s1", "s2"]);
  });

  it("rejects an event of unknown shape", async () => {
    const handler = await loadHandler(awsEnvironment());
    await expect(handler({ foo: 1 } as never)).rejects.toThrow(
      /expected \{"messages": \[\.\.\.\]\}/,
    );
  });
});
