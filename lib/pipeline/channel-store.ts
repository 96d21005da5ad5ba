import { createHash } from "node:crypto";
import type { CreateTableCommandInput, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  type DynamoDBDocumentClient,
  GetCommand,
  paginateQuery,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { documentClient } from "../history/dynamodb/documents.js";
import { decodePosition, encodePosition } from "../history/dynamodb/schema.js";
import { createTable } from "../history/dynamodb/table.js";
import {
  EMPTY_PLANNER_STATE,
  type MessageRef,
  type PlannedSegment,
  type PlannerState,
} from "./types.js";

/**
 * The channels table: one item per channel holding the pipeline's state for it, and the sparse
 * `due` index that lets a tick find the channels with pending work without a Scan.
 *
 * | attribute | meaning |
 * | --- | --- |
 * | `channel` (S) | partition key |
 * | `dueShard` (S), `dueAt` (N) | present only while the channel has work due at `dueAt` (pipeline clock, ms); the `due` index |
 * | `marks` (N), `lastArrival` (S) | bumped by ingestion after each write: a counter, and the writer's clock as a position |
 * | `version` (N) | bumped by every tick that records; the optimistic lock between overlapping ticks |
 * | `readUpTo` (S) | arrival position up to which messages have been read |
 * | `planner` (S) | JSON PlannerState: the open tail (ids and timestamps), the watermark, recent segments |
 * | `outbox` (S), `leaseUntil` (N) | JSON Outbox: what a tick recorded but has not yet confirmed (segments to deliver, drops and late messages to report), and until when (wall ms) that tick owns it |
 */
export const CHANNEL_KEY = "channel";
export const DUE_INDEX = "due";
export const DUE_SHARD = "dueShard";
export const DUE_AT = "dueAt";
/** Shards of the due index; every writer and reader of one table must agree on it. */
export const DEFAULT_DUE_SHARDS = 4;

/**
 * What a tick has decided and recorded but not yet confirmed: segments to deliver, and the
 * dropped and late messages to report. A tick that dies before confirming leaves it for the next.
 */
export interface Outbox {
  segments: PlannedSegment[];
  dropped: MessageRef[];
  late: number;
}

export const EMPTY_OUTBOX: Outbox = Object.freeze({ segments: [], dropped: [], late: 0 });

export interface ChannelRecord {
  channel: string;
  version: number;
  marks: number;
  lastArrival: bigint | null;
  readUpTo: bigint | null;
  planner: PlannerState;
  outbox: Outbox;
  leaseUntil: number | null;
  dueAt: number | null;
}

export interface ChannelStoreOptions {
  client: DynamoDBClient;
  tableName: string;
  /** Partitions of the due index: more shards spread the index's write load (default 4). */
  shards?: number;
}

/** The channels table definition, for local runs and tests (the CDK stack mirrors it). */
export function channelsTableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: [
      { AttributeName: CHANNEL_KEY, AttributeType: "S" },
      { AttributeName: DUE_SHARD, AttributeType: "S" },
      { AttributeName: DUE_AT, AttributeType: "N" },
    ],
    KeySchema: [{ AttributeName: CHANNEL_KEY, KeyType: "HASH" }],
    GlobalSecondaryIndexes: [
      {
        IndexName: DUE_INDEX,
        KeySchema: [
          { AttributeName: DUE_SHARD, KeyType: "HASH" },
          { AttributeName: DUE_AT, KeyType: "RANGE" },
        ],
        Projection: { ProjectionType: "KEYS_ONLY" },
      },
    ],
  };
}

export function createChannelsTable(client: DynamoDBClient, tableName: string): Promise<void> {
  return createTable(client, channelsTableDefinition(tableName));
}

export class ChannelStore {
  private readonly documents: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly shards: number;

  constructor(options: ChannelStoreOptions) {
    this.documents = documentClient(options.client);
    this.tableName = options.tableName;
    this.shards = options.shards ?? DEFAULT_DUE_SHARDS;
  }

  /**
   * Called by ingestion after messages of `channel` were stored: makes the channel due at `now`
   * (pipeline clock) and records that something arrived, as a counter and as the writer's wall
   * clock in nanoseconds (at least the position of anything it wrote).
   */
  async markArrivals(channel: string, now: number): Promise<void> {
    await this.documents.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { [CHANNEL_KEY]: channel },
        UpdateExpression: "SET #shard = :shard, #due = :now, lastArrival = :arrival ADD marks :one",
        ExpressionAttributeNames: { "#shard": DUE_SHARD, "#due": DUE_AT },
        ExpressionAttributeValues: {
          ":shard": this.shardOf(channel),
          ":now": now,
          ":arrival": encodePosition(BigInt(Date.now()) * 1_000_000n),
          ":one": 1,
        },
      }),
    );
  }

  /** The channel's record, read consistently; a channel never ticked has version 0. */
  async get(channel: string): Promise<ChannelRecord> {
    const { Item: item } = await this.documents.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { [CHANNEL_KEY]: channel },
        ConsistentRead: true,
      }),
    );
    return {
      channel,
      version: (item?.version as number | undefined) ?? 0,
      marks: (item?.marks as number | undefined) ?? 0,
      lastArrival: item?.lastArrival ? decodePosition(item.lastArrival as string) : null,
      readUpTo: item?.readUpTo ? decodePosition(item.readUpTo as string) : null,
      planner: item?.planner
        ? (JSON.parse(item.planner as string) as PlannerState)
        : EMPTY_PLANNER_STATE,
      outbox: item?.outbox ? (JSON.parse(item.outbox as string) as Outbox) : EMPTY_OUTBOX,
      leaseUntil: (item?.leaseUntil as number | undefined) ?? null,
      dueAt: (item?.[DUE_AT] as number | undefined) ?? null,
    };
  }

  /**
   * Records a tick's decisions in one conditional write: the planner state, how far arrivals were
   * read, and the segments to deliver with a lease on them. Fails (returns false) when another
   * tick recorded since `record` was read, so overlapping ticks never both deliver.
   */
  async record(
    previous: ChannelRecord,
    next: {
      planner: PlannerState;
      readUpTo: bigint | null;
      outbox: Outbox;
      leaseUntil: number;
    },
  ): Promise<boolean> {
    const first = previous.version === 0;
    return this.update(previous, {
      UpdateExpression:
        "SET version = :next, planner = :planner, outbox = :outbox, leaseUntil = :lease, marks = if_not_exists(marks, :zero)" +
        (next.readUpTo === null ? "" : ", readUpTo = :readUpTo"),
      ConditionExpression: first ? "attribute_not_exists(version)" : "version = :version",
      ExpressionAttributeValues: {
        ":next": previous.version + 1,
        ":planner": JSON.stringify(next.planner),
        ":outbox": JSON.stringify(next.outbox),
        ":lease": next.leaseUntil,
        ":zero": 0,
        ...(first ? {} : { ":version": previous.version }),
        ...(next.readUpTo === null ? {} : { ":readUpTo": encodePosition(next.readUpTo) }),
      },
    });
  }

  /**
   * After delivery: clears the outbox and its lease, and sets when the channel is next due (or
   * takes it off the due index). `recorded` is the record as `record` left it (version bumped). The due time is only changed if no ingestion marked the channel
   * since the tick read it (`marks` unchanged); otherwise it stays due now, so that no arrival
   * is left unread.
   */
  async finish(recorded: ChannelRecord, nextDueAt: number | null): Promise<void> {
    const untouched = await this.update(recorded, {
      UpdateExpression:
        nextDueAt === null
          ? "REMOVE outbox, #shard, #due, leaseUntil"
          : "SET #shard = :shard, #due = :due REMOVE outbox, leaseUntil",
      ConditionExpression: "version = :version AND marks = :marks",
      ExpressionAttributeNames: { "#shard": DUE_SHARD, "#due": DUE_AT },
      ExpressionAttributeValues: {
        ":version": recorded.version,
        ":marks": recorded.marks,
        ...(nextDueAt === null
          ? {}
          : { ":shard": this.shardOf(recorded.channel), ":due": nextDueAt }),
      },
    });
    if (untouched) return;
    await this.update(recorded, {
      UpdateExpression: "REMOVE outbox, leaseUntil",
      ConditionExpression: "version = :version",
      ExpressionAttributeValues: { ":version": recorded.version },
    });
  }

  /** A conditional update of the channel's item; false when the condition did not hold. */
  private async update(
    record: ChannelRecord,
    input: Omit<ConstructorParameters<typeof UpdateCommand>[0], "TableName" | "Key">,
  ): Promise<boolean> {
    try {
      await this.documents.send(
        new UpdateCommand({
          ...input,
          TableName: this.tableName,
          Key: { [CHANNEL_KEY]: record.channel },
        }),
      );
      return true;
    } catch (error) {
      if ((error as Error).name === "ConditionalCheckFailedException") return false;
      throw error;
    }
  }

  /** Channels due at or before `now`, shard by shard, earliest first within a shard. */
  async *dueChannels(now: number): AsyncIterable<string> {
    for (let shard = 0; shard < this.shards; shard++) {
      const pages = paginateQuery(
        { client: this.documents },
        {
          TableName: this.tableName,
          IndexName: DUE_INDEX,
          KeyConditionExpression: "#shard = :shard AND #due <= :now",
          ExpressionAttributeNames: { "#shard": DUE_SHARD, "#due": DUE_AT },
          ExpressionAttributeValues: { ":shard": String(shard), ":now": now },
        },
      );
      for await (const page of pages) {
        for (const item of page.Items ?? []) yield item[CHANNEL_KEY] as string;
      }
    }
  }

  /**
   * Operator reset: forgets what was read and emitted, so that the next tick re-reads the whole
   * channel and delivers its segments again, with the same ids (consumers dedupe by id, or
   * reprocess on purpose). Bumps the version so that a tick running meanwhile cannot record.
   */
  async reset(channel: string, now: number): Promise<void> {
    await this.documents.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { [CHANNEL_KEY]: channel },
        UpdateExpression:
          "SET planner = :empty, #shard = :shard, #due = :now ADD version :one REMOVE readUpTo, outbox, leaseUntil",
        ConditionExpression: "attribute_exists(#channel)",
        ExpressionAttributeNames: { "#shard": DUE_SHARD, "#due": DUE_AT, "#channel": CHANNEL_KEY },
        ExpressionAttributeValues: {
          ":empty": JSON.stringify(EMPTY_PLANNER_STATE),
          ":shard": this.shardOf(channel),
          ":now": now,
          ":one": 1,
        },
      }),
    );
  }

  /** The earliest due time of any channel, or null when none is due: lets a simulation skip idle ticks. */
  async earliestDue(): Promise<number | null> {
    let earliest: number | null = null;
    for (let shard = 0; shard < this.shards; shard++) {
      const { Items: items } = await this.documents.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: DUE_INDEX,
          KeyConditionExpression: "#shard = :shard",
          ExpressionAttributeNames: { "#shard": DUE_SHARD },
          ExpressionAttributeValues: { ":shard": String(shard) },
          Limit: 1,
        }),
      );
      const due = items?.[0]?.[DUE_AT] as number | undefined;
      if (due !== undefined && (earliest === null || due < earliest)) earliest = due;
    }
    return earliest;
  }

  private shardOf(channel: string): string {
    return String(createHash("sha256").update(channel).digest().readUInt32BE(0) % this.shards);
  }
}
