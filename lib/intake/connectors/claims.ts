/**
 * Which platform events were already taken: a retry of one (Slack's `X-Slack-Retry-Num`, after
 * a slow or failed answer) is acknowledged without being sent to ingestion again. The ingest
 * queue is a standard queue, which has no deduplication id, so the claim is a conditional put.
 *
 * A claim is `pending` while its receiver sends and `sent` once the send succeeded. A retry that
 * meets a pending claim is not acknowledged (the first attempt may still fail and give the claim
 * back, and an acknowledged retry would then be the event's last chance lost): it is answered
 * with an error, so the platform retries once more. A pending claim older than its lease is
 * taken over: its receiver died between the claim and the send's outcome.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  PutItemCommand,
} from "@aws-sdk/client-dynamodb";
import { createTable } from "../../base/dynamodb/index.js";

/**
 * `taken`: this call holds the event now; `pending`: another attempt holds it and has not
 * finished; `sent`: it was sent.
 */
export type ClaimOutcome = "taken" | "pending" | "sent";

export interface EventClaims {
  claim(eventId: string): Promise<ClaimOutcome>;
  /** Marks a taken event as sent, so that every later retry is acknowledged. */
  settle(eventId: string): Promise<void>;
  /** Gives the event back (its send failed), so that the platform's retry is taken. */
  release(eventId: string): Promise<void>;
}

/** Slack retries for about five minutes; a day leaves room for a slow redelivery. */
const CLAIM_TTL_SECONDS = 24 * 3600;

/**
 * How long a pending claim holds: far past the receiver's 5-second timeout, and short of Slack's
 * second retry (a minute after the first), which takes over a claim whose receiver died.
 */
export const PENDING_LEASE_SECONDS = 30;

/**
 * Claims in a DynamoDB table keyed by `id` (a string), expiring by TTL on `expiresAt`; the key
 * is prefixed by the platform so that one table serves several connectors. A claim written
 * before claims had states (no `state`) reads as sent.
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

  async claim(eventId: string): Promise<ClaimOutcome> {
    const seconds = this.seconds();
    try {
      await this.options.client.send(
        new PutItemCommand({
          TableName: this.options.tableName,
          Item: {
            id: { S: this.key(eventId) },
            state: { S: "pending" },
            leaseUntil: { N: String(seconds + PENDING_LEASE_SECONDS) },
            expiresAt: { N: String(seconds + CLAIM_TTL_SECONDS) },
          },
          ConditionExpression:
            "attribute_not_exists(id) OR (#state = :pending AND leaseUntil < :now)",
          ExpressionAttributeNames: { "#state": "state" },
          ExpressionAttributeValues: {
            ":pending": { S: "pending" },
            ":now": { N: String(seconds) },
          },
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      );
      return "taken";
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      return error.Item?.state?.S === "pending" ? "pending" : "sent";
    }
  }

  async settle(eventId: string): Promise<void> {
    await this.options.client.send(
      new PutItemCommand({
        TableName: this.options.tableName,
        Item: {
          id: { S: this.key(eventId) },
          state: { S: "sent" },
          expiresAt: { N: String(this.seconds() + CLAIM_TTL_SECONDS) },
        },
      }),
    );
  }

  async release(eventId: string): Promise<void> {
    await this.options.client.send(
      new DeleteItemCommand({
        TableName: this.options.tableName,
        Key: { id: { S: this.key(eventId) } },
      }),
    );
  }

  private seconds(): number {
    return Math.floor((this.options.now?.() ?? Date.now()) / 1000);
  }

  private key(eventId: string): string {
    return `${this.options.platform}#${eventId}`;
  }
}

/** Claims in memory, with the same states and lease: tests, and a local run. */
export class MemoryEventClaims implements EventClaims {
  readonly states = new Map<string, { state: "pending" | "sent"; leaseUntil: number }>();
  constructor(private readonly now: () => number = Date.now) {}

  async claim(eventId: string): Promise<ClaimOutcome> {
    const held = this.states.get(eventId);
    const now = this.now();
    if (held?.state === "sent") return "sent";
    if (held && held.leaseUntil > now) return "pending";
    this.states.set(eventId, { state: "pending", leaseUntil: now + PENDING_LEASE_SECONDS * 1000 });
    return "taken";
  }
  async settle(eventId: string): Promise<void> {
    this.states.set(eventId, { state: "sent", leaseUntil: 0 });
  }
  async release(eventId: string): Promise<void> {
    this.states.delete(eventId);
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
