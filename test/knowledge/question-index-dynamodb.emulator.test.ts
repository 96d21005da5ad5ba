/** The DynamoDB results store: the question index's contract on DynamoDB Local. */

import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { beforeAll } from "vitest";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { createResultsTestTable } from "./fixtures.js";
import { describeQuestionIndex } from "./question-index.js";

let tableName: string;

beforeAll(async () => {
  tableName = await createResultsTestTable(testDynamoDbClient());
});

describeQuestionIndex(
  "DynamoDbResultStore",
  async () => new DynamoDbResultStore({ client: testDynamoDbClient(), tableName }),
);
