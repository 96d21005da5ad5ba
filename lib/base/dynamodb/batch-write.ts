import { BatchWriteCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { type Backoff, backoff } from "../backoff/index.js";
import { isRetryable } from "./errors.js";

/** BatchWriteItem's limit on requests per call. */
const MAX_BATCH_WRITES = 25;

export interface BatchWriteOptions {
  documents: DynamoDBDocumentClient;
  tableName: string;
  /** Calls per chunk before giving up: on unprocessed items and on retryable errors alike. */
  maxAttempts: number;
  /** The pause before each retry. */
  pacing: Backoff;
  signal?: AbortSignal;
}

/**
 * Writes `requests` (put or delete requests of one table) in BatchWriteItem calls of 25,
 * retrying with backoff what DynamoDB leaves unprocessed (it does under throttling) and calls
 * that fail retryably, so that the caller either has every write applied or an error.
 */
export async function batchWriteAll(
  requests: readonly Record<string, unknown>[],
  options: BatchWriteOptions,
): Promise<void> {
  const { documents, tableName, maxAttempts, pacing, signal } = options;
  for (let i = 0; i < requests.length; i += MAX_BATCH_WRITES) {
    let pending = requests.slice(i, i + MAX_BATCH_WRITES);
    for (let attempt = 1; pending.length > 0; attempt++) {
      if (attempt > 1) await backoff(pacing, attempt - 1);
      try {
        const { UnprocessedItems } = await documents.send(
          new BatchWriteCommand({ RequestItems: { [tableName]: pending } }),
          { abortSignal: signal },
        );
        pending = (UnprocessedItems?.[tableName] ?? []) as Record<string, unknown>[];
      } catch (error) {
        if (!isRetryable(error) || attempt >= maxAttempts || signal?.aborted) throw error;
        continue;
      }
      if (pending.length > 0 && attempt >= maxAttempts) {
        throw new Error(
          `table ${tableName}: ${pending.length} batched write(s) still unprocessed after ${maxAttempts} attempts`,
        );
      }
    }
  }
}
