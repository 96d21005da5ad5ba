/**
 * The channels table: each channel's marks and tick state (`../store/channel-state.ts`) as items
 * of one partition, and the sparse `due` index over the marks items that lets a tick find the
 * channels with pending work without a Scan.
 *
 * | item (`channel`, `item`) | attribute | meaning |
 * | --- | --- | --- |
 * | marks (`"marks"`) | `seq` (N) | the last arrival position handed out; starts at the clock in ns |
 * | | `h<count>.<token>` (N) | a writer's hold: the first of `count` positions it is writing |
 * | | `marks` (N) | leases released so far |
 * | | `dueShard` (S), `dueAt` (N) | only while work is due: the `due` index, sharded by channel hash |
 * | | `delivered` (N) | the recorded version whose outbox went out |
 * | | `linkerReset` (N) | an erasure's request (wall ms of the latest) to empty the reply linker's window |
 * | tick state (`"state"`) | `version` (N) | bumped by each record: the fence between overlapping ticks |
 * | | `state` (B) | the encoded tick state (deflated JSON, the linker's window as bytes after it); larger ones continue in pages |
 * | | `pages` (N), `lease` (N), `recordId` (S) | extra pages, the outbox's lease (wall ms), the write's id |
 * | state page (`"state.01"`…) | `version` (N), `state` (B) | the rest of a large tick state |
 * | share claim (`"shareClaim"`) | `until` (N), `owner` (S) | a fanned-out tick's worker on its share |
 *
 * Ingestion writes only the marks item, and only the attributes of {@link MARK_ATTRIBUTES}: one
 * small item, one write unit per mark, and an IAM policy can hold it to them. An erasure writes
 * only those of {@link LINKER_RESET_ATTRIBUTES}, the message counter those of
 * {@link COUNT_ATTRIBUTES}.
 */
import type {
  AttributeValue,
  CreateTableCommandInput,
  DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import { createTable } from "../../../base/dynamodb/index.js";

export const CHANNEL_KEY = "channel";
export const ITEM_KEY = "item";
export const MARKS_ITEM = "marks";
export const STATE_ITEM = "state";
/**
 * The item of a share's claim: a name no channel item has (`marks`, `state`, `state.NN`), so it
 * can never be read as part of a channel even if a channel had the claim's partition key.
 */
export const SHARE_CLAIM_ITEM = "shareClaim";
export const DUE_INDEX = "due";
export const DUE_SHARD = "dueShard";
export const DUE_AT = "dueAt";
/**
 * The marks attribute by which an erasure asks the tick to drop the channel's reply linker window
 * (`ChannelStore.requestLinkerReset`): the wall ms of the latest request, only ever raised.
 */
export const LINKER_RESET = "linkerReset";
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

/** The attributes an erasure writes: the reset request, and what marking the channel due takes. */
export const LINKER_RESET_ATTRIBUTES = [
  CHANNEL_KEY,
  ITEM_KEY,
  LINKER_RESET,
  DUE_SHARD,
  DUE_AT,
] as const;

/**
 * The marks attributes the message counter writes (`MessageCounts`, from the messages table's
 * stream): the count of messages the channel keeps, and the sequence number of the last stream
 * record in it.
 */
export const MESSAGE_COUNT = "messages";
export const COUNTED_TO = "countedTo";
export const COUNT_ATTRIBUTES = [CHANNEL_KEY, ITEM_KEY, MESSAGE_COUNT, COUNTED_TO] as const;

/** The key of one item of a channel. */
export function channelItemKey(channel: string, item: string): Record<string, AttributeValue> {
  return { [CHANNEL_KEY]: { S: channel }, [ITEM_KEY]: { S: item } };
}

/** The item of page `page` (from 1) of a large tick state. */
export function statePageItem(page: number): string {
  return `${STATE_ITEM}.${String(page).padStart(2, "0")}`;
}

/** A hold's attribute name carries its size: `h<count>.<random>`. */
export function holdName(count: number, token: string): string {
  return `h${count}.${token}`;
}

/** The size of the hold an attribute of the marks item names, or undefined for another attribute. */
export function holdCount(name: string): number | undefined {
  const match = /^h(\d+)\.[A-Za-z0-9_-]+$/.exec(name);
  return match ? Number(match[1]) : undefined;
}

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
