import {
  type DynamoDBDocumentClient,
  PutCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { type Backoff, backoff } from "../../base/backoff/index.js";
import { isConditionFailure, isRetryable } from "../../base/dynamodb/index.js";
import { SORT_KEY } from "./schema.js";

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

/**
 * Puts `item` unless an item of its key is stored (retried while transient): true when it was
 * put, false when its key was taken. Any other failure is thrown as it came.
 */
export async function putIfAbsent(
  access: TableAccess,
  item: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<boolean> {
  try {
    await withRetries(access, () =>
      access.documents.send(
        new PutCommand({
          TableName: access.tableName,
          Item: item,
          ConditionExpression: "attribute_not_exists(#k)",
          ExpressionAttributeNames: { "#k": SORT_KEY },
        }),
        { abortSignal: signal },
      ),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * A conditional update of the table (retried while transient): true when it was made, false when
 * its condition failed. Any other failure is thrown as it came.
 */
export async function updateIf(
  access: TableAccess,
  update: Omit<UpdateCommandInput, "TableName">,
  signal?: AbortSignal,
): Promise<boolean> {
  try {
    await withRetries(access, () =>
      access.documents.send(new UpdateCommand({ ...update, TableName: access.tableName }), {
        abortSignal: signal,
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
