import { randomBytes } from "node:crypto";
import { ChannelPositions } from "convoseg/ingest";
import { createChannelsTable } from "convoseg/pipeline/schema";
import { DynamoDbChannelStore } from "convoseg/pipeline/store";
import { testDynamoDbClient } from "../../support/dynamodb.js";
import { describeChannelStoreConformance } from "./store-conformance.js";

const client = testDynamoDbClient();

// A table per test: the due index is table-wide, so each test's due lists are its own.
describeChannelStoreConformance("DynamoDbChannelStore", async (dueShards) => {
  const tableName = `channels-${randomBytes(6).toString("hex")}`;
  await createChannelsTable(client, tableName);
  let now = 0;
  return {
    store: new DynamoDbChannelStore({ client, tableName, dueShards }),
    positions: new ChannelPositions({ client, tableName, dueShards, now: () => now }),
    setNow: (ms) => (now = ms),
  };
});
