/**
 * Which platform events were already taken: a retry of one (Slack's `X-Slack-Retry-Num`, after
 * a slow or failed answer) is acknowledged without being sent to ingestion again. The ingest
 * queue is a standard queue, which has no deduplication id, so the claim is a conditional put.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  PutItemCommand,
} from "@aws-sdk/client-dynamodb";
import { createTable } from "../dynamodb/index.js";

export interface EventClaims {
  /** True when this call took the event, false when it was taken already. */
  claim(eventId: string): Promise<boolean>;
  /** Gives the event back (its send failed), so that the platform's retry is taken. */
  release(eventId: string): Promise<void>;
}

/** Slack retries for about five minutes; a day leaves room for a slow redelivery. */
export const CLAIM_TTL_SECONDS = 24 * 3600;

/**
 * Claims in a DynamoDB table keyed by `id` (a string), expiring by TTL on `expiresAt`; the key
 * is prefixed by the platform so that one table serves several connectors.
 */
export class DynamoDbEventClaims implements EventClaims {
  constructor(
    private readonly options: {
      client: DynamoDBClient;
      tableName: string;
      /** `slack`, `telegram`: the key's prefix. */
      platform: string;
      now?: () => number;
    },
  ) {}

  async claim(eventId: string): Promise<boolean> {
    const now = this.options.now?.() ?? Date.now();
    try {
      await this.options.client.send(
        new PutItemCommand({
          TableName: this.options.tableName,
          Item: {
            id: { S: this.key(eventId) },
            expiresAt: { N: String(Math.floor(now / 1000) + CLAIM_TTL_SECONDS) },
          },
          ConditionExpression: "attribute_not_exists(id)",
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async release(eventId: string): Promise<void> {
    await this.options.client.send(
      new DeleteItemCommand({
        TableName: this.options.tableName,
        Key: { id: { S: this.key(eventId) } },
      }),
    );
  }

  private key(eventId: string): string {
    return `${this.options.platform}#${eventId}`;
  }
}

/** Claims in memory: tests, and a local run. */
export class MemoryEventClaims implements EventClaims {
  readonly taken = new Set<string>();
  async claim(eventId: string): Promise<boolean> {
    if (this.taken.has(eventId)) return false;
    this.taken.add(eventId);
    return true;
  }
  async release(eventId: string): Promise<void> {
    this.taken.delete(eventId);
  }
}

/** The claims table as the stack makes it (key `id`), for tests and local runs. */
export async function createClaimsTable(client: DynamoDBClient, tableName: string): Promise<void> {
  await createTable(client, {
    TableName: tableName,
    AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" }],
    KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
    BillingMode: "PAY_PER_REQUEST",
  });
}
