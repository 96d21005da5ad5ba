/**
 * A channel's items on the channels table read as one snapshot, and its tick state written in
 * pages: a state larger than one page continues in `state.NN` items, written with the head in one
 * transaction and each carrying the version it belongs to, so a read never mixes two versions.
 */
import {
  BatchWriteItemCommand,
  paginateQuery,
  type TransactWriteItem,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from "@aws-sdk/client-dynamodb";
import { cancellationReasons, isConditionFailure } from "../../../base/dynamodb/index.js";
import { ChannelStateError } from "../errors.js";
import {
  CHANNEL_KEY,
  channelItemKey,
  DUE_AT,
  ITEM_KEY,
  LINKER_RESET,
  MARKS_ITEM,
  STATE_ITEM,
  statePageItem,
} from "../schema/table.js";
import { type ChannelsTable, type Item, N, S } from "./attributes.js";
import {
  type ChannelMarks,
  type ChannelRecord,
  type ChannelSnapshot,
  EMPTY_MARKS,
  EMPTY_TICK_STATE,
  type Hold,
  MAX_STATE_BYTES,
  MAX_STATE_PAGES,
  parseHold,
  type RecordOutcome,
  STATE_PAGE_BYTES,
  type TickState,
} from "./channel-state.js";
import { decodeTickState, encodeTickState } from "./tick-state.js";

/** Both records of a channel, read consistently (see `ChannelStore.load`). */
export async function loadSnapshot(
  table: ChannelsTable,
  channel: string,
): Promise<ChannelSnapshot> {
  // A Query sees each item committed, but not a multi-page write atomically: pages carry the
  // version they belong to, and a mixed read is read again.
  for (let attempt = 1; ; attempt++) {
    const items: Item[] = [];
    const pages = paginateQuery(
      { client: table.client },
      {
        TableName: table.tableName,
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

/** Writes the next tick state, fenced on the snapshot's version (see `ChannelStore.record`). */
export async function recordState(
  table: ChannelsTable,
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
    TableName: table.tableName,
    Key: channelItemKey(channel, STATE_ITEM),
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
      await table.client.send(new UpdateItemCommand(head));
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
        TableName: table.tableName,
        Item: {
          ...channelItemKey(channel, statePageItem(i + 1)),
          version: N(version + 1),
          state: { B: bytes },
        },
      },
    });
  });
  for (let page = chunks.length; page <= snapshot.pages; page++) {
    actions.push({
      Delete: { TableName: table.tableName, Key: channelItemKey(channel, statePageItem(page)) },
    });
  }
  try {
    await table.client.send(new TransactWriteItemsCommand({ TransactItems: actions }));
    return "recorded";
  } catch (error) {
    if (cancellationReasons(error)[0] !== "ConditionalCheckFailed") throw error;
    const reasons = (error as { CancellationReasons?: { Item?: Item }[] }).CancellationReasons;
    return mine(reasons?.[0]?.Item);
  }
}

/**
 * The reset's state write: an empty state under a new version (so a tick that loaded before
 * cannot record over it), without a lease, and the pages of `snapshot`'s state deleted.
 */
export async function resetState(table: ChannelsTable, snapshot: ChannelSnapshot): Promise<void> {
  const { channel } = snapshot;
  await table.client.send(
    new UpdateItemCommand({
      TableName: table.tableName,
      Key: channelItemKey(channel, STATE_ITEM),
      UpdateExpression: "SET #state = :state, #pages = :zero ADD #version :one REMOVE #lease, #rid",
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
    DeleteRequest: { Key: channelItemKey(channel, statePageItem(i + 1)) },
  }));
  if (stale.length > 0) {
    await table.client.send(
      new BatchWriteItemCommand({ RequestItems: { [table.tableName]: stale } }),
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
      const item = byItem.get(statePageItem(page));
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
    linkerReset: item[LINKER_RESET]?.N === undefined ? null : Number(item[LINKER_RESET].N),
  };
}
