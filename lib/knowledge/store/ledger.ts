/**
 * The counters the consumer keeps in the results table: each segment's failed attempts (on its
 * lease item, which a stored result deletes) and the tokens spent per UTC day, per channel and
 * per deployment. Both are atomic `ADD`s, so concurrent deliveries and functions count right.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { documentClient } from "../../base/dynamodb/index.js";
import { leaseItemKey, SCHEMA_VERSION, spendItemKey } from "./schema/items.js";
import { RESULTS_PARTITION_KEY, RESULTS_SORT_KEY, RESULTS_TTL_ATTRIBUTE } from "./schema/table.js";

/** A segment's failed attempts, as the consumer counts them. */
export interface AttemptLedger {
  /** Counts one more failed attempt; resolves to the count so far. */
  countAttempt(channel: string, segmentId: string): Promise<number>;
  /** Forgets the count (the segment was dead-lettered: a redrive starts again). */
  clearAttempts(channel: string, segmentId: string): Promise<void>;
}

/** Tokens spent per UTC day under a key (a channel, or the deployment's partition). */
export interface SpendCounter {
  spent(key: string, day: string): Promise<number>;
  add(key: string, day: string, tokens: number): Promise<void>;
}

const DAY_MS = 86_400_000;
/** A spend item outlives its day by a day (a late reader), then expires. */
const SPEND_TTL_MS = 2 * DAY_MS;
/** A spend item's expiry, epoch seconds. */
const spendExpiry = (day: string) => Math.ceil((Date.parse(day) + DAY_MS + SPEND_TTL_MS) / 1000);
/** An attempt count's expiry after a failure at `now`, epoch seconds. */
const attemptsExpiry = (now: number, retentionMs: number) => Math.ceil((now + retentionMs) / 1000);

export interface DynamoDbLedgerOptions {
  client: DynamoDBClient;
  tableName: string;
  /** How long an attempt count is kept after its last failure (default 15 days). */
  retentionMs?: number;
  now?: () => number;
}

/** Both counters on the results table. */
export class DynamoDbLedger implements AttemptLedger, SpendCounter {
  private readonly documents: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly retentionMs: number;
  private readonly now: () => number;

  constructor(options: DynamoDbLedgerOptions) {
    this.documents = documentClient(options.client);
    this.tableName = options.tableName;
    this.retentionMs = options.retentionMs ?? 15 * DAY_MS;
    this.now = options.now ?? Date.now;
  }

  async countAttempt(channel: string, segmentId: string): Promise<number> {
    const { Attributes } = await this.documents.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key(channel, leaseItemKey(segmentId)),
        // The lease item keeps its own expiry when it has one (a lease sets it).
        UpdateExpression: "SET v = :v, #ttl = if_not_exists(#ttl, :ttl) ADD attempts :one",
        ExpressionAttributeNames: { "#ttl": RESULTS_TTL_ATTRIBUTE },
        ExpressionAttributeValues: {
          ":v": SCHEMA_VERSION,
          ":one": 1,
          ":ttl": attemptsExpiry(this.now(), this.retentionMs),
        },
        ReturnValues: "UPDATED_NEW",
      }),
    );
    return Number(Attributes?.attempts ?? 1);
  }

  async clearAttempts(channel: string, segmentId: string): Promise<void> {
    await this.documents.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key(channel, leaseItemKey(segmentId)),
        UpdateExpression: "REMOVE attempts",
      }),
    );
  }

  async spent(partition: string, day: string): Promise<number> {
    const { Item } = await this.documents.send(
      new GetCommand({
        TableName: this.tableName,
        Key: key(partition, spendItemKey(day)),
        // Only the count: a reader granted the counters alone (the tick's link advisor) reads it.
        ProjectionExpression: "tokens",
        ConsistentRead: true,
      }),
    );
    return Number(Item?.tokens ?? 0);
  }

  async add(partition: string, day: string, tokens: number): Promise<void> {
    await this.documents.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key(partition, spendItemKey(day)),
        UpdateExpression: "SET v = :v, #ttl = :ttl ADD tokens :tokens",
        ExpressionAttributeNames: { "#ttl": RESULTS_TTL_ATTRIBUTE },
        ExpressionAttributeValues: {
          ":v": SCHEMA_VERSION,
          ":tokens": tokens,
          ":ttl": spendExpiry(day),
        },
      }),
    );
  }
}

/**
 * Both counters in memory, for tests and tools without DynamoDB; their items carry the expiries
 * the table's do (`retentionMs` and `now` as `DynamoDbLedger`'s).
 */
export class MemoryLedger implements AttemptLedger, SpendCounter {
  private readonly attempts = new Map<string, number>();
  /** Each attempt count's expiry, set by its first failure as the table's `if_not_exists`. */
  private readonly attemptsExpire = new Map<string, number>();
  private readonly tokens = new Map<string, number>();
  private readonly retentionMs: number;
  private readonly now: () => number;

  constructor(options: { retentionMs?: number; now?: () => number } = {}) {
    this.retentionMs = options.retentionMs ?? 15 * DAY_MS;
    this.now = options.now ?? Date.now;
  }

  async countAttempt(channel: string, segmentId: string): Promise<number> {
    const id = JSON.stringify([channel, segmentId]);
    const count = (this.attempts.get(id) ?? 0) + 1;
    this.attempts.set(id, count);
    if (!this.attemptsExpire.has(id)) {
      this.attemptsExpire.set(id, attemptsExpiry(this.now(), this.retentionMs));
    }
    return count;
  }

  async clearAttempts(channel: string, segmentId: string): Promise<void> {
    // The table's item keeps its expiry (REMOVE attempts): a count started again keeps it too.
    this.attempts.delete(JSON.stringify([channel, segmentId]));
  }

  /** The count so far (for tests): what a stored result would have deleted is the caller's. */
  attemptsOf(channel: string, segmentId: string): number {
    return this.attempts.get(JSON.stringify([channel, segmentId])) ?? 0;
  }

  async spent(partition: string, day: string): Promise<number> {
    return this.tokens.get(JSON.stringify([partition, day])) ?? 0;
  }

  async add(partition: string, day: string, tokens: number): Promise<void> {
    const id = JSON.stringify([partition, day]);
    this.tokens.set(id, (this.tokens.get(id) ?? 0) + tokens);
  }

  /** Every count as the table's items hold it, keys included (for checks of what is kept). */
  items(): Record<string, unknown>[] {
    const entries = (counts: Map<string, number>) =>
      [...counts].map(([id, n]) => [...(JSON.parse(id) as [string, string]), n] as const);
    return [
      ...entries(this.attempts).map(([channel, segmentId, attempts]) => ({
        ...key(channel, leaseItemKey(segmentId)),
        v: SCHEMA_VERSION,
        attempts,
        [RESULTS_TTL_ATTRIBUTE]: this.attemptsExpire.get(JSON.stringify([channel, segmentId])),
      })),
      ...entries(this.tokens).map(([partition, day, tokens]) => ({
        ...key(partition, spendItemKey(day)),
        v: SCHEMA_VERSION,
        tokens,
        [RESULTS_TTL_ATTRIBUTE]: spendExpiry(day),
      })),
    ];
  }
}

function key(partition: string, item: string) {
  return { [RESULTS_PARTITION_KEY]: partition, [RESULTS_SORT_KEY]: item };
}
