/**
 * {@link ChannelStore} on the channels table (`../schema/table.ts`): the snapshot and paged
 * state in `./paged-state.ts`, the due index's reads in `./due-index.ts`, the shares' claims in
 * `./share-claims.ts`; here the marks item's updates (finishing a channel, breaking holds, moving
 * the sequence on, an erasure's linker reset).
 */
import {
  type AttributeValue,
  type DynamoDBClient,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from "@aws-sdk/client-dynamodb";
import { isConditionFailure } from "../../../base/dynamodb/index.js";
import { ChannelStateError } from "../errors.js";
import {
  checkDueShards,
  DUE_SHARDS,
  dueShardOf,
  dueShardsRead,
  shareShards,
} from "../schema/due-shards.js";
import { channelItemKey, DUE_AT, DUE_SHARD, LINKER_RESET, MARKS_ITEM } from "../schema/table.js";
import type { TickShare } from "../types.js";
import { type ChannelsTable, N, S } from "./attributes.js";
import type {
  ChannelSnapshot,
  ChannelStore,
  DueChannel,
  RecordOutcome,
  TickState,
} from "./channel-state.js";
import { countDueItems, dueItems, earliestDue, mergeByDue } from "./due-index.js";
import { loadSnapshot, recordState, resetState } from "./paged-state.js";
import { claimShare, releaseShare } from "./share-claims.js";

export interface DynamoDbChannelStoreOptions {
  client: DynamoDBClient;
  tableName: string;
  /** Shards of the due index, the deployment's `dueShards` (default {@link DUE_SHARDS}). */
  dueShards?: number;
  /** The count before a change of `dueShards`, read too until migrated (`dueShardsRead`). */
  previousDueShards?: number | null;
  /** Where the tick's read reports `DueItemsInOldShards` while a previous count is set. */
  metrics?: { add(name: string, value: number): void };
}

/** {@link ChannelStore} on the channels table. */
export class DynamoDbChannelStore implements ChannelStore {
  private readonly table: ChannelsTable;
  private readonly dueShards: number;
  private readonly shards: string[];
  private readonly metrics: DynamoDbChannelStoreOptions["metrics"];

  constructor(options: DynamoDbChannelStoreOptions) {
    this.table = { client: options.client, tableName: options.tableName };
    this.dueShards = checkDueShards(options.dueShards ?? DUE_SHARDS);
    const previous = options.previousDueShards ?? null;
    if (previous !== null) checkDueShards(previous, "previousDueShards");
    this.shards = dueShardsRead(this.dueShards, previous);
    this.metrics = options.metrics;
  }

  /** The shards the tick reads: the current count's and, while migrating, the previous one's. */
  get readShards(): readonly string[] {
    return this.shards;
  }

  /**
   * Due items (whenever due) left in shards the current count no longer writes (of `share`'s
   * shards only, when given): 0 once a shrinking migration is done (and always without a
   * previous count larger than the current).
   */
  oldShardItems(share?: TickShare): Promise<number> {
    const old = this.shards.slice(this.dueShards);
    return countDueItems(this.table, share === undefined ? old : shareShards(old, share));
  }

  load(channel: string): Promise<ChannelSnapshot> {
    return loadSnapshot(this.table, channel);
  }

  record(
    snapshot: ChannelSnapshot,
    next: { state: TickState; encoded: Uint8Array; leaseUntil: number; recordId: string },
  ): Promise<RecordOutcome> {
    return recordState(this.table, snapshot, next);
  }

  async finish(
    snapshot: ChannelSnapshot,
    version: number,
    nextDueAt: number | null,
    now: number,
  ): Promise<void> {
    const { channel, marks } = snapshot;
    const delivered = "(attribute_not_exists(#delivered) OR #delivered <= :v)";
    const names = { "#delivered": "delivered", "#shard": DUE_SHARD, "#due": DUE_AT };
    const values = { ":v": N(version), ":shard": S(dueShardOf(channel, this.dueShards)) };
    const untouched = [
      marks.marks === 0 ? "attribute_not_exists(#marks)" : "#marks = :marks",
      marks.seq === null ? "attribute_not_exists(#seq)" : "#seq = :seq",
      marks.linkerReset === null ? "attribute_not_exists(#reset)" : "#reset = :reset",
    ].join(" AND ");
    const attempts: Omit<UpdateItemCommandInput, "TableName" | "Key">[] = [
      // Nobody reserved or released since the load: the due time is the tick's to set.
      {
        UpdateExpression:
          nextDueAt === null
            ? "SET #delivered = :v REMOVE #shard, #due"
            : "SET #delivered = :v, #shard = :shard, #due = :next",
        ConditionExpression: `${delivered} AND ${untouched}`,
        ExpressionAttributeNames: {
          ...names,
          "#marks": "marks",
          "#seq": "seq",
          "#reset": LINKER_RESET,
        },
        ExpressionAttributeValues: {
          ":v": N(version),
          ...(nextDueAt === null ? {} : { ":shard": values[":shard"], ":next": N(nextDueAt) }),
          ...(marks.marks === 0 ? {} : { ":marks": N(marks.marks) }),
          ...(marks.seq === null ? {} : { ":seq": N(marks.seq) }),
          ...(marks.linkerReset === null ? {} : { ":reset": N(marks.linkerReset) }),
        },
      },
      // A writer came meanwhile: stay due, at the earlier of the due time and now.
      {
        UpdateExpression: "SET #delivered = :v, #shard = :shard, #due = :now",
        ConditionExpression: `${delivered} AND (attribute_not_exists(#due) OR #due > :now)`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ...values, ":now": N(now) },
      },
      // Due earlier already (a writer's mark): keep that time, but move it to the current shard.
      {
        UpdateExpression: "SET #delivered = :v, #shard = :shard",
        ConditionExpression: `${delivered} AND attribute_exists(#due)`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
      {
        UpdateExpression: "SET #delivered = :v",
        ConditionExpression: delivered,
        ExpressionAttributeNames: { "#delivered": "delivered" },
        ExpressionAttributeValues: { ":v": N(version) },
      },
    ];
    for (const attempt of attempts) {
      try {
        await this.updateMarks(channel, attempt);
        return;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
    // A later version was marked delivered already: this tick's finish is moot.
  }

  async requestLinkerReset(channel: string, requestedAt: number, now: number): Promise<void> {
    const names = { "#reset": LINKER_RESET, "#shard": DUE_SHARD, "#due": DUE_AT };
    const shard = S(dueShardOf(channel, this.dueShards));
    // The request: the time when it is later than the one there, else one past that (a second
    // request within the same millisecond, or a clock behind, must still read as newer).
    const resets: { set: string; condition: string; values: Record<string, AttributeValue> }[] = [
      {
        set: "#reset = :at",
        condition: "(attribute_not_exists(#reset) OR #reset < :at)",
        values: { ":at": N(requestedAt) },
      },
      {
        set: "#reset = #reset + :one",
        condition: "attribute_exists(#reset)",
        values: { ":one": N(1) },
      },
    ];
    // Due now as a release makes it (keeping an earlier due time), on the current shard.
    const dues = [
      { set: "#due = :now", condition: "(attribute_not_exists(#due) OR #due > :now)" },
      { set: "#due = if_not_exists(#due, :now)", condition: undefined },
    ];
    for (const reset of resets) {
      for (const due of dues) {
        try {
          await this.updateMarks(channel, {
            UpdateExpression: `SET ${reset.set}, #shard = :shard, ${due.set}`,
            ConditionExpression: [reset.condition, due.condition]
              .filter((c) => c !== undefined)
              .join(" AND "),
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: { ...reset.values, ":shard": shard, ":now": N(now) },
          });
          return;
        } catch (error) {
          if (!isConditionFailure(error)) throw error;
        }
      }
    }
    throw new ChannelStateError(channel, "the linker reset's marks kept changing under it");
  }

  async breakHolds(channel: string, holds: readonly string[]): Promise<void> {
    if (holds.length === 0) return;
    const names = Object.fromEntries(holds.map((hold, i) => [`#h${i}`, hold]));
    await this.updateMarks(channel, {
      UpdateExpression: `REMOVE ${Object.keys(names).join(", ")}`,
      ExpressionAttributeNames: names,
    });
  }

  async advanceSequence(channel: string, to: bigint): Promise<void> {
    try {
      await this.updateMarks(channel, {
        UpdateExpression: "SET #seq = :to",
        ConditionExpression: "attribute_not_exists(#seq) OR #seq < :to",
        ExpressionAttributeNames: { "#seq": "seq" },
        ExpressionAttributeValues: { ":to": N(to) },
      });
    } catch (error) {
      // Already at or past it: a writer reserved meanwhile, or a retry of this very update.
      if (!isConditionFailure(error)) throw error;
    }
  }

  async *dueChannels(now: number, share?: TickShare): AsyncIterable<DueChannel> {
    if (this.metrics !== undefined && this.shards.length > this.dueShards) {
      this.metrics.add("DueItemsInOldShards", await this.oldShardItems(share));
    }
    const read = share === undefined ? this.shards : shareShards(this.shards, share);
    const shards = read.map((shard) => dueItems(this.table, shard, now)[Symbol.asyncIterator]());
    yield* mergeByDue(shards);
  }

  claimShare(share: TickShare, owner: string, until: number, wallNow: number): Promise<boolean> {
    return claimShare(this.table, share, owner, until, wallNow);
  }

  releaseShare(share: TickShare, owner: string): Promise<void> {
    return releaseShare(this.table, share, owner);
  }

  earliestDue(): Promise<number | null> {
    return earliestDue(this.table, this.shards);
  }

  async reset(channel: string, now: number): Promise<void> {
    await resetState(this.table, await this.load(channel));
    await this.updateMarks(channel, {
      UpdateExpression: "SET #shard = :shard, #due = :now",
      ExpressionAttributeNames: { "#shard": DUE_SHARD, "#due": DUE_AT },
      ExpressionAttributeValues: {
        ":shard": S(dueShardOf(channel, this.dueShards)),
        ":now": N(now),
      },
    });
  }

  private async updateMarks(
    channel: string,
    update: Omit<UpdateItemCommandInput, "TableName" | "Key">,
  ): Promise<void> {
    await this.table.client.send(
      new UpdateItemCommand({
        TableName: this.table.tableName,
        Key: channelItemKey(channel, MARKS_ITEM),
        ...update,
      }),
    );
  }
}
