/**
 * The channels table on DynamoDB: each channel's marks and tick state (`./channel-state.ts`) as
 * items of one partition, and the sparse `due` index over the marks items that lets a tick find
 * the channels with pending work without a Scan.
 *
 * | item (`channel`, `item`) | attribute | meaning |
 * | --- | --- | --- |
 * | marks (`"marks"`) | `seq` (N) | the last arrival position handed out; starts at the clock in ns |
 * | | `h<count>.<token>` (N) | a writer's hold: the first of `count` positions it is writing |
 * | | `marks` (N) | leases released so far |
 * | | `dueShard` (S), `dueAt` (N) | only while work is due: the `due` index, sharded by channel hash |
 * | | `delivered` (N) | the recorded version whose outbox went out |
 * | tick state (`"state"`) | `version` (N) | bumped by each record: the fence between overlapping ticks |
 * | | `state` (B) | the encoded tick state (deflated JSON); larger ones continue in pages |
 * | | `pages` (N), `lease` (N), `recordId` (S) | extra pages, the outbox's lease (wall ms), the write's id |
 * | state page (`"state.01"`…) | `version` (N), `state` (B) | the rest of a large tick state |
 *
 * Ingestion writes only the marks item, and only the attributes of {@link MARK_ATTRIBUTES}: one
 * small item, one write unit per mark, and an IAM policy can hold it to them.
 */
import { createHash, randomBytes } from "node:crypto";
import {
  type AttributeValue,
  BatchWriteItemCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
  paginateQuery,
  QueryCommand,
  type QueryCommandOutput,
  type TransactWriteItem,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from "@aws-sdk/client-dynamodb";
import { cancellationReasons, createTable, isConditionFailure } from "../dynamodb/index.js";
import type { ConversationId, PositionAllocator, PositionLease } from "../history/index.js";
import {
  type ChannelMarks,
  type ChannelRecord,
  type ChannelSnapshot,
  type ChannelStore,
  type DueChannel,
  decodeTickState,
  EMPTY_MARKS,
  EMPTY_TICK_STATE,
  encodeTickState,
  type Hold,
  holdName,
  parseHold,
  type RecordOutcome,
  type TickState,
} from "./channel-state.js";
import { ChannelStateError } from "./errors.js";
import type { TickShare } from "./types.js";

export const CHANNEL_KEY = "channel";
export const ITEM_KEY = "item";
export const MARKS_ITEM = "marks";
export const STATE_ITEM = "state";
export const DUE_INDEX = "due";
export const DUE_SHARD = "dueShard";
export const DUE_AT = "dueAt";
/** Shards of the due index by default (the `dueShards` setting; see {@link dueShardsRead}). */
export const DUE_SHARDS = 4;
/**
 * Most shards the due index may be given. Each shard is one GSI partition key value, so one
 * partition: about 1,000 writes/s of due marks each. 1,000 shards carry ~1M marks/s, well past a
 * table's default throughput quota (40,000 write units/s), so more would buy nothing; and every
 * tick queries every shard (twice, with `earliestDue`), so the count is also the tick's fixed cost.
 */
export const MAX_DUE_SHARDS = 1000;
/** The attributes ingestion writes (holds match `h*`); nothing else of the table. */
export const MARK_ATTRIBUTES = [
  CHANNEL_KEY,
  ITEM_KEY,
  "seq",
  "h*",
  "marks",
  DUE_SHARD,
  DUE_AT,
] as const;

/** A tick state larger than one page continues in page items; each stays far below 400 KB. */
export const STATE_PAGE_BYTES = 256 * 1024;
/** Pages of one state, all written in one transaction (4 MB at most). */
export const MAX_STATE_PAGES = 12;
export const MAX_STATE_BYTES = STATE_PAGE_BYTES * MAX_STATE_PAGES;

/** How long a writer may go on starting puts under one hold (its lease), by its own clock. */
export const DEFAULT_WRITE_WINDOW_MS = 60_000;

/** The channels table definition, for local runs and tests (the CDK stack mirrors it). */
export function channelsTableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: [
      { AttributeName: CHANNEL_KEY, AttributeType: "S" },
      { AttributeName: ITEM_KEY, AttributeType: "S" },
      { AttributeName: DUE_SHARD, AttributeType: "S" },
      { AttributeName: DUE_AT, AttributeType: "N" },
    ],
    KeySchema: [
      { AttributeName: CHANNEL_KEY, KeyType: "HASH" },
      { AttributeName: ITEM_KEY, KeyType: "RANGE" },
    ],
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

/** The due index shard of a channel among `shards`: a stable hash, so every writer agrees. */
export function dueShardOf(channel: string, shards: number = DUE_SHARDS): string {
  return String(createHash("sha256").update(channel).digest().readUInt32BE(0) % shards);
}

/**
 * The shards the tick reads: every shard id below the larger of the current count and the
 * previous one (`previousDueShards`, kept while a change of `dueShards` migrates).
 *
 * Changing the count is safe because a due item is never hidden. A writer on either count puts
 * the item in a shard below that count, and the reader covers both, so during a rolling deploy
 * (or while users' own `IngestClient`s still run the old count) both are found. Every due item
 * the tick finishes is rewritten under the current count, so items leave the old-only shards
 * (`current..previous-1`, only when shrinking) as their channels come due; the tick reports
 * what is left there as the `DueItemsInOldShards` metric. Growing needs no previous count (the
 * old shards are a subset of the new), shrinking does until that metric reads 0 with every
 * writer on the new count; then the previous count is dropped. Reading the union instead of
 * sweeping old shards keeps one code path and costs only a few extra queries per tick.
 */
export function dueShardsRead(dueShards: number, previousDueShards?: number | null): string[] {
  const count = Math.max(dueShards, previousDueShards ?? 0);
  return Array.from({ length: count }, (_, shard) => String(shard));
}

/**
 * The shards of `shards` (as {@link dueShardsRead} lists them) that `share` owns: those whose
 * number is the share's index modulo the share count. Every shard has one owner, so the workers
 * of a tick together read the whole index, each channel in one worker's part.
 */
export function shareShards(shards: readonly string[], share: TickShare): string[] {
  return shards.filter((shard) => Number(shard) % share.of === share.index);
}

/**
 * The key of a share's claim: an item name no channel item has (`marks`, `state`, `state.NN`),
 * so it can never be read as part of a channel even if a channel had this id.
 */
export const SHARE_CLAIM_ITEM = "shareClaim";
const shareClaimKey = (share: TickShare) => ({
  [CHANNEL_KEY]: { S: `due-share/${share.index}/${share.of}` },
  [ITEM_KEY]: { S: SHARE_CLAIM_ITEM },
});

/** Throws unless `shards` is a shard count the due index may have (1 to {@link MAX_DUE_SHARDS}). */
export function checkDueShards(shards: number, name = "dueShards"): number {
  if (!Number.isSafeInteger(shards) || shards < 1 || shards > MAX_DUE_SHARDS) {
    throw new RangeError(`${name} must be an integer from 1 to ${MAX_DUE_SHARDS} (got ${shards})`);
  }
  return shards;
}

const S = (value: string): AttributeValue => ({ S: value });
const N = (value: number | bigint): AttributeValue => ({ N: value.toString() });
const key = (channel: string, item: string) => ({ [CHANNEL_KEY]: S(channel), [ITEM_KEY]: S(item) });
const pageItem = (page: number) => `${STATE_ITEM}.${String(page).padStart(2, "0")}`;
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
        Key: key(channel, MARKS_ITEM),
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
          Key: key(channel, MARKS_ITEM),
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

export interface DynamoDbChannelStoreOptions {
  client: DynamoDBClient;
  tableName: string;
  /** Shards of the due index, the deployment's `dueShards` (default {@link DUE_SHARDS}). */
  dueShards?: number;
  /** The count before a change of `dueShards`, read too until migrated ({@link dueShardsRead}). */
  previousDueShards?: number | null;
  /** Where the tick's read reports `DueItemsInOldShards` while a previous count is set. */
  metrics?: { add(name: string, value: number): void };
}

type Item = Record<string, AttributeValue>;

/** {@link ChannelStore} on the channels table. */
export class DynamoDbChannelStore implements ChannelStore {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly dueShards: number;
  private readonly shards: string[];
  private readonly metrics: DynamoDbChannelStoreOptions["metrics"];

  constructor(options: DynamoDbChannelStoreOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
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
  async oldShardItems(share?: TickShare): Promise<number> {
    const old = this.shards.slice(this.dueShards);
    const counts = await Promise.all(
      (share === undefined ? old : shareShards(old, share)).map(async (shard) => {
        let count = 0;
        const pages = paginateQuery(
          { client: this.client },
          {
            TableName: this.tableName,
            IndexName: DUE_INDEX,
            KeyConditionExpression: "#shard = :shard",
            ExpressionAttributeNames: { "#shard": DUE_SHARD },
            ExpressionAttributeValues: { ":shard": S(shard) },
            Select: "COUNT",
          },
        );
        for await (const page of pages) count += page.Count ?? 0;
        return count;
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  async load(channel: string): Promise<ChannelSnapshot> {
    // A Query sees each item committed, but not a multi-page write atomically: pages carry the
    // version they belong to, and a mixed read is read again.
    for (let attempt = 1; ; attempt++) {
      const items: Item[] = [];
      const pages = paginateQuery(
        { client: this.client },
        {
          TableName: this.tableName,
          ConsistentRead: true,
          KeyConditionExpression: "#c = :c",
          ExpressionAttributeNames: { "#c": CHANNEL_KEY },
          ExpressionAttributeValues: { ":c": S(channel) },
        },
      );
      for await (const page of pages) items.push(...(page.Items ?? []));
      const snapshot = snapshotOf(channel, items);
      if (snapshot !== undefined) return snapshot;
      if (attempt >= 3)
        throw new ChannelStateError(channel, "tick state pages do not match its version");
    }
  }

  async record(
    snapshot: ChannelSnapshot,
    next: { state: TickState; encoded: Uint8Array; leaseUntil: number; recordId: string },
  ): Promise<RecordOutcome> {
    const { channel } = snapshot;
    const chunks = pagesOf(next.encoded);
    if (chunks.length > MAX_STATE_PAGES) {
      throw new ChannelStateError(
        channel,
        `tick state of ${next.encoded.byteLength} bytes exceeds ${MAX_STATE_BYTES} bytes`,
      );
    }
    const version = snapshot.record.version;
    const head: UpdateItemCommandInput = {
      TableName: this.tableName,
      Key: key(channel, STATE_ITEM),
      UpdateExpression:
        "SET #version = :next, #state = :state, #pages = :pages, #lease = :lease, #rid = :rid",
      ConditionExpression: version === 0 ? "attribute_not_exists(#version)" : "#version = :version",
      ExpressionAttributeNames: {
        "#version": "version",
        "#state": "state",
        "#pages": "pages",
        "#lease": "lease",
        "#rid": "recordId",
      },
      ExpressionAttributeValues: {
        ":next": N(version + 1),
        ":state": { B: chunks[0] },
        ":pages": N(chunks.length - 1),
        ":lease": N(next.leaseUntil),
        ":rid": S(next.recordId),
        ...(version === 0 ? {} : { ":version": N(version) }),
      },
      ReturnValuesOnConditionCheckFailure: "ALL_OLD",
    };
    const mine = (old: Item | undefined) =>
      old?.recordId?.S === next.recordId ? "recorded" : "conflict";
    if (chunks.length === 1 && snapshot.pages === 0) {
      try {
        await this.client.send(new UpdateItemCommand(head));
        return "recorded";
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        // A retried request whose first attempt did commit finds its own write.
        return mine((error as { Item?: Item }).Item);
      }
    }
    const actions: TransactWriteItem[] = [{ Update: head as TransactWriteItem["Update"] }];
    chunks.slice(1).forEach((bytes, i) => {
      actions.push({
        Put: {
          TableName: this.tableName,
          Item: { ...key(channel, pageItem(i + 1)), version: N(version + 1), state: { B: bytes } },
        },
      });
    });
    for (let page = chunks.length; page <= snapshot.pages; page++) {
      actions.push({ Delete: { TableName: this.tableName, Key: key(channel, pageItem(page)) } });
    }
    try {
      await this.client.send(new TransactWriteItemsCommand({ TransactItems: actions }));
      return "recorded";
    } catch (error) {
      if (cancellationReasons(error)[0] !== "ConditionalCheckFailed") throw error;
      const reasons = (error as { CancellationReasons?: { Item?: Item }[] }).CancellationReasons;
      return mine(reasons?.[0]?.Item);
    }
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
    ].join(" AND ");
    const attempts: Omit<UpdateItemCommandInput, "TableName" | "Key">[] = [
      // Nobody reserved or released since the load: the due time is the tick's to set.
      {
        UpdateExpression:
          nextDueAt === null
            ? "SET #delivered = :v REMOVE #shard, #due"
            : "SET #delivered = :v, #shard = :shard, #due = :next",
        ConditionExpression: `${delivered} AND ${untouched}`,
        ExpressionAttributeNames: { ...names, "#marks": "marks", "#seq": "seq" },
        ExpressionAttributeValues: {
          ":v": N(version),
          ...(nextDueAt === null ? {} : { ":shard": values[":shard"], ":next": N(nextDueAt) }),
          ...(marks.marks === 0 ? {} : { ":marks": N(marks.marks) }),
          ...(marks.seq === null ? {} : { ":seq": N(marks.seq) }),
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
        await this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: key(channel, MARKS_ITEM),
            ...attempt,
          }),
        );
        return;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
    // A later version was marked delivered already: this tick's finish is moot.
  }

  async breakHolds(channel: string, holds: readonly string[]): Promise<void> {
    if (holds.length === 0) return;
    const names = Object.fromEntries(holds.map((hold, i) => [`#h${i}`, hold]));
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: key(channel, MARKS_ITEM),
        UpdateExpression: `REMOVE ${Object.keys(names).join(", ")}`,
        ExpressionAttributeNames: names,
      }),
    );
  }

  async *dueChannels(now: number, share?: TickShare): AsyncIterable<DueChannel> {
    if (this.metrics !== undefined && this.shards.length > this.dueShards) {
      this.metrics.add("DueItemsInOldShards", await this.oldShardItems(share));
    }
    const read = share === undefined ? this.shards : shareShards(this.shards, share);
    const shards = read.map((shard) => this.dueItems(shard, now)[Symbol.asyncIterator]());
    yield* mergeByDue(shards);
  }

  async claimShare(
    share: TickShare,
    owner: string,
    until: number,
    wallNow: number,
  ): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: shareClaimKey(share),
          UpdateExpression: "SET #until = :until, #owner = :owner",
          ConditionExpression: "attribute_not_exists(#until) OR #until <= :now",
          ExpressionAttributeNames: { "#until": "until", "#owner": "owner" },
          ExpressionAttributeValues: { ":until": N(until), ":owner": S(owner), ":now": N(wallNow) },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async releaseShare(share: TickShare, owner: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: shareClaimKey(share),
          UpdateExpression: "REMOVE #until, #owner",
          ConditionExpression: "#owner = :owner",
          ExpressionAttributeNames: { "#until": "until", "#owner": "owner" },
          ExpressionAttributeValues: { ":owner": S(owner) },
        }),
      );
    } catch (error) {
      // Claimed by another after this claim ran out: theirs now.
      if (!isConditionFailure(error)) throw error;
    }
  }

  private async *dueItems(
    shard: string,
    now: number,
  ): AsyncIterable<{ channel: string; dueAt: number }> {
    const pages = paginateQuery(
      { client: this.client },
      {
        TableName: this.tableName,
        IndexName: DUE_INDEX,
        KeyConditionExpression: "#shard = :shard AND #due <= :now",
        ExpressionAttributeNames: { "#shard": DUE_SHARD, "#due": DUE_AT },
        ExpressionAttributeValues: { ":shard": S(shard), ":now": N(now) },
      },
    );
    for await (const page of pages) {
      for (const item of page.Items ?? []) {
        yield { channel: item[CHANNEL_KEY]?.S ?? "", dueAt: Number(item[DUE_AT]?.N) };
      }
    }
  }

  async earliestDue(): Promise<number | null> {
    const firsts = await Promise.all(
      this.shards.map((shard) =>
        this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: DUE_INDEX,
            KeyConditionExpression: "#shard = :shard",
            ExpressionAttributeNames: { "#shard": DUE_SHARD },
            ExpressionAttributeValues: { ":shard": S(shard) },
            Limit: 1,
          }),
        ),
      ),
    );
    const due = firsts.flatMap((result: QueryCommandOutput) => {
      const value = result.Items?.[0]?.[DUE_AT]?.N;
      return value === undefined ? [] : [Number(value)];
    });
    return due.length === 0 ? null : Math.min(...due);
  }

  async reset(channel: string, now: number): Promise<void> {
    const snapshot = await this.load(channel);
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: key(channel, STATE_ITEM),
        UpdateExpression:
          "SET #state = :state, #pages = :zero ADD #version :one REMOVE #lease, #rid",
        ExpressionAttributeNames: {
          "#state": "state",
          "#pages": "pages",
          "#version": "version",
          "#lease": "lease",
          "#rid": "recordId",
        },
        ExpressionAttributeValues: {
          ":state": { B: encodeTickState(EMPTY_TICK_STATE) },
          ":zero": N(0),
          ":one": N(1),
        },
      }),
    );
    const stale = Array.from({ length: snapshot.pages }, (_, i) => ({
      DeleteRequest: { Key: key(channel, pageItem(i + 1)) },
    }));
    if (stale.length > 0) {
      await this.client.send(
        new BatchWriteItemCommand({ RequestItems: { [this.tableName]: stale } }),
      );
    }
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: key(channel, MARKS_ITEM),
        UpdateExpression: "SET #shard = :shard, #due = :now",
        ExpressionAttributeNames: { "#shard": DUE_SHARD, "#due": DUE_AT },
        ExpressionAttributeValues: {
          ":shard": S(dueShardOf(channel, this.dueShards)),
          ":now": N(now),
        },
      }),
    );
  }
}

/** Splits an encoded state into pages. */
function pagesOf(encoded: Uint8Array): Uint8Array[] {
  const pages: Uint8Array[] = [];
  for (let at = 0; at < Math.max(1, encoded.byteLength); at += STATE_PAGE_BYTES) {
    pages.push(encoded.subarray(at, at + STATE_PAGE_BYTES));
  }
  return pages;
}

/** A snapshot from a channel's items, or undefined when its state pages belong to other versions. */
function snapshotOf(channel: string, items: Item[]): ChannelSnapshot | undefined {
  const byItem = new Map(items.map((item) => [item[ITEM_KEY]?.S ?? "", item]));
  const marksItem = byItem.get(MARKS_ITEM);
  const stateItem = byItem.get(STATE_ITEM);
  const version = Number(stateItem?.version?.N ?? 0);
  const pages = Number(stateItem?.pages?.N ?? 0);
  let record: ChannelRecord = {
    version,
    state: EMPTY_TICK_STATE,
    leaseUntil: null,
    recordId: null,
  };
  let stateBytes = 0;
  if (stateItem?.state?.B !== undefined) {
    const parts = [stateItem.state.B];
    for (let page = 1; page <= pages; page++) {
      const item = byItem.get(pageItem(page));
      if (item?.state?.B === undefined || Number(item.version?.N) !== version) return undefined;
      parts.push(item.state.B);
    }
    const bytes = Buffer.concat(parts);
    stateBytes = bytes.byteLength;
    record = {
      version,
      state: decodeTickState(channel, bytes),
      leaseUntil: stateItem.lease?.N === undefined ? null : Number(stateItem.lease.N),
      recordId: stateItem.recordId?.S ?? null,
    };
  }
  return { channel, marks: marksOf(marksItem), record, stateBytes, pages };
}

function marksOf(item: Item | undefined): ChannelMarks {
  if (item === undefined) return EMPTY_MARKS;
  const holds: Hold[] = [];
  for (const [name, value] of Object.entries(item)) {
    const hold = value.N === undefined ? undefined : parseHold(name, BigInt(value.N));
    if (hold !== undefined) holds.push(hold);
  }
  holds.sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  return {
    seq: item.seq?.N === undefined ? null : BigInt(item.seq.N),
    marks: Number(item.marks?.N ?? 0),
    holds,
    dueAt: item[DUE_AT]?.N === undefined ? null : Number(item[DUE_AT].N),
    delivered: Number(item.delivered?.N ?? 0),
  };
}

/**
 * Merges the shards' due channels, each in due order, into one stream in due order: under a
 * time budget the longest-waiting channels go first, whichever shard holds them.
 */
export async function* mergeByDue(shards: AsyncIterator<DueChannel>[]): AsyncIterable<DueChannel> {
  const heads = await Promise.all(shards.map((shard) => shard.next()));
  for (;;) {
    let best = -1;
    heads.forEach((head, i) => {
      if (
        !head.done &&
        (best < 0 || head.value.dueAt < (heads[best].value as { dueAt: number }).dueAt)
      )
        best = i;
    });
    if (best < 0) return;
    yield heads[best].value as DueChannel;
    heads[best] = await shards[best].next();
  }
}
