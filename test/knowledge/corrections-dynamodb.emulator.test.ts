/** Question corrections on DynamoDB Local (`./corrections.ts`): one table for the file. */
import { DynamoDbResultStore, type ResultStore } from "convoseg/knowledge/store";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { describeCorrections } from "./corrections.js";
import { createResultsTestTable } from "./fixtures.js";

const client = testDynamoDbClient();
let store: Promise<ResultStore> | undefined;

describeCorrections(
  "DynamoDB Local",
  () => {
    store ??= createResultsTestTable(client).then(
      (tableName) => new DynamoDbResultStore({ client, tableName }),
    );
    return store;
  },
  10,
);
