import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { type Backoff, backoff } from "../../backoff/index.js";
import { isRetryable } from "../../dynamodb/index.js";

/** What every request of the DynamoDB store needs: the client, the table and the retry policy. */
export interface TableAccess {
  readonly documents: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Attempts per request before it gives up. */
  readonly maxAttempts: number;
  readonly pacing: Backoff;
}

/** `call`, retried with backoff while its failure is transient, at most `maxAttempts` times. */
export async function withRetries<R>(access: TableAccess, call: () => Promise<R>): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!isRetryable(error) || attempt >= access.maxAttempts) throw error;
      await backoff(access.pacing, attempt);
    }
  }
}
