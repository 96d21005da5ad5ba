/**
 * Ingestion's arrival positions on the channels table (`lib/segmentation/pipeline/schema`): the history
 * store's `PositionAllocator` for the deployed pipeline, writing only the channel's marks item.
 */
import { randomBytes } from "node:crypto";
import {
  type AttributeValue,
  type DynamoDBClient,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from "@aws-sdk/client-dynamodb";
import { isConditionFailure } from "../../base/dynamodb/index.js";
import type { ConversationId } from "../../history/index.js";
import type { PositionAllocator, PositionLease } from "../../history/positions/index.js";
import { ChannelStateError } from "../../segmentation/pipeline/index.js";
import {
  channelItemKey,
  checkDueShards,
  DUE_AT,
  DUE_SHARD,
  DUE_SHARDS,
  dueShardOf,
  holdName,
  MARKS_ITEM,
} from "../../segmentation/pipeline/schema/index.js";

/** How long a writer may go on starting puts under one hold (its lease), by its own clock. */
const DEFAULT_WRITE_WINDOW_MS = 60_000;

const S = (value: string): AttributeValue => ({ S: value });
const N = (value: number | bigint): AttributeValue => ({ N: value.toString() });
const nsNow = () => BigInt(Date.now()) * 1_000_000n;

export interface ChannelPositionsOptions {
  client: DynamoDBClient;
  tableName: string;
  /** The pipeline clock (epoch ms) that due times are in; the wall clock unless simulated. */
  now?: () => number;
  /** How long a writer may start puts under one hold (default 1 minute). */
  writeWindowMs?: number;
  /** Shards of the due index, the deployment's `dueShards` (default {@link DUE_SHARDS}). */
  dueShards?: number;
}

/**
 * Arrival positions for ingestion, from the channel's marks item: a reservation takes the next
 * `count` positions of the channel's sequence and, in the same atomic update, leaves a hold on
 * them; releasing removes the hold and marks the channel due. The tick never reads past a held
 * position, and every position below what it reads up to was handed out before, so a message
 * can never be written behind the read position, whatever the writers' clocks or latency (unless
 * its hold was broken: see `BrokenHold`).
 */
export class ChannelPositions implements PositionAllocator {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly now: () => number;
  private readonly writeWindowMs: number;
  private readonly dueShards: number;

  constructor(options: ChannelPositionsOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.now = options.now ?? Date.now;
    this.writeWindowMs = options.writeWindowMs ?? DEFAULT_WRITE_WINDOW_MS;
    this.dueShards = checkDueShards(options.dueShards ?? DUE_SHARDS);
  }

  async reserve(
    channel: ConversationId,
    count: number,
    signal?: AbortSignal,
  ): Promise<PositionLease> {
    const hold = holdName(count, randomBytes(9).toString("base64url"));
    const { Attributes: updated } = await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: channelItemKey(channel, MARKS_ITEM),
        UpdateExpression:
          "SET #h = if_not_exists(#seq, :now) + :one, #seq = if_not_exists(#seq, :now) + :n",
        ExpressionAttributeNames: { "#h": hold, "#seq": "seq" },
        ExpressionAttributeValues: { ":now": N(nsNow()), ":one": N(1), ":n": N(count) },
        ReturnValues: "UPDATED_NEW",
      }),
      { abortSignal: signal },
    );
    const first = updated?.[hold]?.N;
    if (first === undefined)
      throw new ChannelStateError(channel, "reservation returned no position");
    return {
      first: BigInt(first),
      startBy: performance.now() + this.writeWindowMs,
      release: () => this.release(channel, hold),
    };
  }

  /**
   * Removes the hold, counts the release and makes the channel due now, keeping an earlier due
   * time (so a busy channel that keeps failing still ages). A hold that is gone was broken by a
   * tick: the channel is still marked, and the tick finds these messages by re-reading the range.
   */
  private async release(channel: string, hold: string): Promise<void> {
    const now = this.now();
    const names = { "#h": hold, "#marks": "marks", "#shard": DUE_SHARD, "#due": DUE_AT };
    const update = (input: Omit<UpdateItemCommandInput, "TableName" | "Key">) =>
      this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: channelItemKey(channel, MARKS_ITEM),
          ...input,
        }),
      );
    const due = { ":shard": S(dueShardOf(channel, this.dueShards)), ":now": N(now) };
    try {
      await update({
        UpdateExpression: "REMOVE #h ADD #marks :one SET #shard = :shard, #due = :now",
        ConditionExpression: "attribute_exists(#h) AND (attribute_not_exists(#due) OR #due > :now)",
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ":one": N(1), ...due },
      });
      return;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    try {
      await update({
        UpdateExpression: "REMOVE #h ADD #marks :one",
        ConditionExpression: "attribute_exists(#h)",
        ExpressionAttributeNames: { "#h": hold, "#marks": "marks" },
        ExpressionAttributeValues: { ":one": N(1) },
      });
      return;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    await update({
      UpdateExpression: "ADD #marks :one SET #shard = :shard, #due = if_not_exists(#due, :now)",
      ExpressionAttributeNames: { "#marks": "marks", "#shard": DUE_SHARD, "#due": DUE_AT },
      ExpressionAttributeValues: { ":one": N(1), ...due },
    });
  }
}
