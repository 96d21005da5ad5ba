/**
 * An erasure resets the reply linker (`./linker-reset.ts`), on DynamoDB Local: the eraser's own
 * wiring (`dynamoDbErasure`, one due shard) against a tick reading four.
 */
import { randomUUID } from "node:crypto";
import { dynamoDbErasure } from "convoseg/erasure";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { ChannelPositions } from "convoseg/ingest";
import { createChannelsTable } from "convoseg/pipeline/schema";
import { DynamoDbChannelStore } from "convoseg/pipeline/store";
import { createMessagesTestTable, createResultsTestTable } from "../../knowledge/fixtures.js";
import { testDynamoDbClient } from "../../support/dynamodb.js";
import { describeLinkerReset } from "./linker-reset.js";
import { AUDIT_SECRET } from "./world.js";

const client = testDynamoDbClient();

describeLinkerReset(
  "DynamoDB Local",
  async () => {
    const messagesTable = await createMessagesTestTable(client);
    const resultsTable = await createResultsTestTable(client);
    const channelsTable = `channels-${randomUUID()}`;
    await createChannelsTable(client, channelsTable);
    const now = () => Date.UTC(2025, 0, 6);
    return {
      history: new DynamoDbStore({
        client,
        tableName: messagesTable,
        positions: new ChannelPositions({ client, tableName: channelsTable, now }),
      }),
      channels: new DynamoDbChannelStore({ client, tableName: channelsTable, dueShards: 4 }),
      erasure: (clock) =>
        dynamoDbErasure(
          { client, messagesTable, resultsTable, channelsTable, auditSecret: AUDIT_SECRET },
          { now: clock },
        ),
    };
  },
  120_000,
);
