/**
 * The results table as the write paths beside the store (redaction, the question index) use it:
 * its own file so that those paths can share it without importing one another.
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { BatchWriteOptions } from "../../base/dynamodb/index.js";

export type RedactionTable = Omit<BatchWriteOptions, "tableName"> & {
  documents: DynamoDBDocumentClient;
  tableName: string;
};
