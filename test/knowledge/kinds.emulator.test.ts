/**
 * The registry of knowledge kinds on DynamoDB Local (`./kinds-conformance.ts`), with a
 * workspace's ledger of delivered bodies beside the tables and the derived indexes (search).
 */

import { DeleteCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { documentClient } from "convoseg/dynamodb";
import { DynamoDbAuditStore, MemoryDigestArchive } from "convoseg/erasure";
import { DynamoDbChannelNames, DynamoDbStore } from "convoseg/history/dynamodb";
import { DynamoDbLedger, DynamoDbResultStore } from "convoseg/knowledge/store";
import {
  RESULTS_PARTITION_KEY,
  RESULTS_SORT_KEY,
  RESULTS_TTL_ATTRIBUTE,
} from "convoseg/knowledge/store/schema";
import { SegmentLedger } from "../../local/ledger.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { createMessagesTestTable, createResultsTestTable } from "./fixtures.js";
import { describeKinds } from "./kinds-conformance.js";

const client = testDynamoDbClient();

/** Every item of a table, read consistently. */
async function scan(tableName: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documentClient(client).send(
      new ScanCommand({ TableName: tableName, ExclusiveStartKey: start, ConsistentRead: true }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items;
}

describeKinds("DynamoDB Local", async () => {
  const messagesTable = await createMessagesTestTable(client);
  const tableName = await createResultsTestTable(client);
  const ledgerTable = `${messagesTable}-ledger`;
  await SegmentLedger.create(client, ledgerTable);
  return {
    history: new DynamoDbStore({ client, tableName: messagesTable }),
    channelNames: new DynamoDbChannelNames({ client, tableName: messagesTable }),
    results: new DynamoDbResultStore({ client, tableName }),
    spend: new DynamoDbLedger({ client, tableName }),
    audits: new DynamoDbAuditStore({ client, tableName }),
    items: () => scan(tableName),
    messageItems: () => scan(messagesTable),
    ledger: new SegmentLedger(client, ledgerTable),
    digests: new MemoryDigestArchive(),
    // The search index on LanceDB in a directory, as the deployment keeps it on S3.
    derivedIndexes: true,
    // DynamoDB's TTL, at once: every item whose expiry has passed goes.
    expire: async (epochSeconds) => {
      for (const item of await scan(tableName)) {
        const expiresAt = item[RESULTS_TTL_ATTRIBUTE];
        if (typeof expiresAt !== "number" || expiresAt >= epochSeconds) continue;
        await documentClient(client).send(
          new DeleteCommand({
            TableName: tableName,
            Key: {
              [RESULTS_PARTITION_KEY]: item[RESULTS_PARTITION_KEY],
              [RESULTS_SORT_KEY]: item[RESULTS_SORT_KEY],
            },
          }),
        );
      }
    },
  };
});
