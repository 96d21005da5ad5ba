/**
 * The crash properties, rogue writers and edits and deletions of `tick-properties.test.ts` on the
 * real stores: the
 * DynamoDB message store and channel store, with ingestion's positions, on DynamoDB Local, each
 * run on fresh tables. Fewer and shorter runs: every call is a request.
 */
import { randomBytes } from "node:crypto";
import { createMessagesTable, DynamoDbStore } from "convoseg/history/dynamodb";
import { ChannelPositions } from "convoseg/ingest";
import { createChannelsTable } from "convoseg/pipeline/schema";
import { DynamoDbChannelStore } from "convoseg/pipeline/store";
import { testDynamoDbClient } from "../../support/dynamodb.js";
import { dynamoDbRogueMarks } from "../../support/rogue-marks.js";
import { describeChangeProperties } from "./change-replay.js";
import { describeCrashProperties, type StoresFactory } from "./crash-replay.js";
import { describeRogueWriters } from "./rogue-writers.js";

const client = testDynamoDbClient();

const dynamoDbStores: StoresFactory = async (clock, dueShards) => {
  const suffix = randomBytes(6).toString("hex");
  const [messagesTable, channelsTable] = [`messages-${suffix}`, `channels-${suffix}`];
  await Promise.all([
    createMessagesTable(client, messagesTable),
    createChannelsTable(client, channelsTable),
  ]);
  const positions = new ChannelPositions({
    client,
    tableName: channelsTable,
    dueShards,
    now: () => clock.now,
  });
  return {
    messages: new DynamoDbStore({ client, tableName: messagesTable, positions }),
    channels: new DynamoDbChannelStore({ client, tableName: channelsTable, dueShards }),
    rogue: dynamoDbRogueMarks(client, channelsTable),
  };
};

describeCrashProperties("DynamoDB stores", dynamoDbStores, {
  maxMessages: 12,
  crashRuns: 8,
  fanOutRuns: 6,
  cleanFanOutRuns: 4,
  rogueRuns: 6,
  timeout: 300_000,
});
describeRogueWriters("DynamoDB stores", dynamoDbStores);
describeChangeProperties("DynamoDB stores", dynamoDbStores, {
  maxMessages: 12,
  runs: 6,
  timeout: 300_000,
});
describeCrashProperties(
  "DynamoDB stores",
  dynamoDbStores,
  {
    maxMessages: 12,
    crashRuns: 4,
    fanOutRuns: 3,
    cleanFanOutRuns: 2,
    rogueRuns: 3,
    timeout: 300_000,
  },
  "linked",
);
describeChangeProperties(
  "DynamoDB stores",
  dynamoDbStores,
  { maxMessages: 12, runs: 3, timeout: 300_000 },
  "linked",
);
