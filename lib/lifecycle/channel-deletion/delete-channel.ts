/**
 * Removing a channel entirely: its pipeline state, its messages and every derived item, in an
 * order chosen so that a crash midway leaves nothing that would be processed again. The
 * channel's state goes first (marks, then state): with no due entry and no state no tick
 * segments it, so nothing is delivered again; then anything else that could deliver it again (a
 * local workspace's ledger); then the messages; then the results partition, whose leftovers a
 * repeat removes; last, the derived indexes kept outside the tables (the deployed search index:
 * the registry's `channelDeletion`), so that what an extraction in flight wrote is gone too.
 * Each step removes what it finds, so running it again finishes an interrupted run and does
 * nothing after a complete one.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, type DynamoDBDocumentClient, paginateQuery } from "@aws-sdk/lib-dynamodb";
import { realSleep } from "../../base/backoff/index.js";
import { batchWriteAll, documentClient } from "../../base/dynamodb/index.js";
import { DynamoDbStore } from "../../history/dynamodb/index.js";
import { validateConversationId } from "../../history/index.js";
import { BY_POSITION_INDEX, PARTITION_KEY } from "../../history/schema/index.js";
import { kindOf } from "../../knowledge/index.js";
import { RESULTS_PARTITION_KEY, RESULTS_SORT_KEY } from "../../knowledge/store/schema/index.js";
import {
  CHANNEL_KEY,
  ITEM_KEY,
  MARKS_ITEM,
  SHARE_CLAIM_ITEM,
} from "../../segmentation/pipeline/schema/index.js";

/** One place that holds a channel's items: counted for a dry run, else removed. */
export interface ChannelPart {
  /** What it is, as a report names it: `channel state`, `messages`, `results`, … */
  readonly name: string;
  /** Its table. */
  readonly table: string;
  count(channel: string): Promise<number | Tally>;
  /** Removes the channel's items; resolves to how many there were. */
  remove(channel: string): Promise<number | Tally>;
}

/** A part's items, with how many of each kind. */
interface Tally {
  items: number;
  kinds: Record<string, number>;
}

export interface DeleteChannelOptions {
  client: DynamoDBClient;
  messagesTable: string;
  channelsTable: string;
  resultsTable: string;
  channel: string;
  /** Count only (default false). */
  dryRun?: boolean;
  /**
   * What else holds the channel's pipeline state and could deliver its segments again (a local
   * workspace's ledger of delivered segments): removed after the channels table's items and
   * before the messages.
   */
  pipelineParts?: readonly ChannelPart[];
  /**
   * The derived indexes that keep a part per channel outside the tables (the deployed search
   * index, `lib/knowledge/kinds.ts`): removed last.
   */
  derivedParts?: readonly ChannelPart[];
}

/** What one part held of the channel: removed, or with `dryRun` counted. */
export interface PartCount {
  name: string;
  table: string;
  items: number;
  /** The results part's items by knowledge kind (`lib/knowledge/kinds.ts`), where it has any. */
  kinds?: Record<string, number>;
}

const PACING = { baseDelayMs: 50, maxDelayMs: 2000, random: Math.random, sleep: realSleep };
const MAX_ATTEMPTS = 8;

/**
 * Removes (or with `dryRun` counts) everything stored of `channel`, part by part in deletion
 * order, and says how many items each held. Against a deployment, stop the channel's producers
 * first: a message ingested meanwhile makes the channel live again.
 */
export async function deleteChannel(options: DeleteChannelOptions): Promise<PartCount[]> {
  const { channel } = options;
  validateConversationId(channel);
  const documents = documentClient(options.client);
  const parts: ChannelPart[] = [
    channelState(documents, options.channelsTable),
    ...(options.pipelineParts ?? []),
    messages(options.client, documents, options.messagesTable),
    results(documents, options.resultsTable),
    ...(options.derivedParts ?? []),
  ];
  const counts: PartCount[] = [];
  for (const part of parts) {
    const found = options.dryRun ? await part.count(channel) : await part.remove(channel);
    counts.push({
      name: part.name,
      table: part.table,
      ...(typeof found === "number" ? { items: found } : found),
    });
  }
  return counts;
}

/** The keys of a partition's items (strongly consistent), page by page. */
async function* partitionKeys(
  documents: DynamoDBDocumentClient,
  table: string,
  keys: { partition: string; sort: string },
  value: string,
): AsyncIterable<Record<string, unknown>[]> {
  const pages = paginateQuery(
    { client: documents },
    {
      TableName: table,
      ConsistentRead: true,
      KeyConditionExpression: "#p = :p",
      ProjectionExpression: "#p, #s",
      ExpressionAttributeNames: { "#p": keys.partition, "#s": keys.sort },
      ExpressionAttributeValues: { ":p": value },
    },
  );
  for await (const page of pages) yield (page.Items ?? []) as Record<string, unknown>[];
}

/** How many items a query finds, without reading them out. */
async function countQuery(
  documents: DynamoDBDocumentClient,
  input: { table: string; index?: string; partition: string; value: string },
): Promise<number> {
  let count = 0;
  const pages = paginateQuery(
    { client: documents },
    {
      TableName: input.table,
      IndexName: input.index,
      Select: "COUNT",
      KeyConditionExpression: "#p = :p",
      ExpressionAttributeNames: { "#p": input.partition },
      ExpressionAttributeValues: { ":p": input.value },
    },
  );
  for await (const page of pages) count += page.Count ?? 0;
  return count;
}

function deleteKeys(
  documents: DynamoDBDocumentClient,
  table: string,
  keys: readonly Record<string, unknown>[],
): Promise<void> {
  return batchWriteAll(
    keys.map((key) => ({ DeleteRequest: { Key: key } })),
    { documents, tableName: table, maxAttempts: MAX_ATTEMPTS, pacing: PACING },
  );
}

/**
 * The channel's items of the channels table: marks (with its due entry) first, so that no tick
 * takes the channel up while its state goes, then the state and its pages. A share's claim,
 * which may share a partition key with a channel id, is not the channel's.
 */
function channelState(documents: DynamoDBDocumentClient, table: string): ChannelPart {
  const keys = { partition: CHANNEL_KEY, sort: ITEM_KEY };
  const items = async (channel: string) => {
    const found: Record<string, unknown>[] = [];
    for await (const page of partitionKeys(documents, table, keys, channel)) {
      found.push(...page.filter((key) => key[ITEM_KEY] !== SHARE_CLAIM_ITEM));
    }
    return found;
  };
  return {
    name: "channel state",
    table,
    count: async (channel) => (await items(channel)).length,
    remove: async (channel) => {
      const found = await items(channel);
      const marks = found.find((key) => key[ITEM_KEY] === MARKS_ITEM);
      if (marks !== undefined) {
        await documents.send(new DeleteCommand({ TableName: table, Key: marks }));
      }
      await deleteKeys(
        documents,
        table,
        found.filter((key) => key !== marks),
      );
      return found.length;
    },
  };
}

/**
 * The channel's messages, counted on the `byPosition` index (small entries, no message text)
 * and removed by the history store's `clear`, which takes the channel's listing item too.
 */
function messages(
  client: DynamoDBClient,
  documents: DynamoDBDocumentClient,
  table: string,
): ChannelPart {
  const count = (channel: string) =>
    countQuery(documents, {
      table,
      index: BY_POSITION_INDEX,
      partition: PARTITION_KEY,
      value: channel,
    });
  return {
    name: "messages",
    table,
    count,
    remove: async (channel) => {
      const found = await count(channel);
      await new DynamoDbStore({ client, tableName: table }).clear(channel);
      return found;
    },
  };
}

/**
 * Every results-table item of the channel's partition, told by the registry's kinds (results,
 * topic and question entries, window replies, term statistics, spans, leases, spend: every kind
 * stored in a channel's partition). An item of no registered kind goes too: the partition is the
 * channel's. The deployment's own partition is no channel's.
 */
function results(documents: DynamoDBDocumentClient, table: string): ChannelPart {
  const keys = { partition: RESULTS_PARTITION_KEY, sort: RESULTS_SORT_KEY };
  const tally = async (channel: string, remove: boolean): Promise<Tally> => {
    const found: Tally = { items: 0, kinds: {} };
    for await (const page of partitionKeys(documents, table, keys, channel)) {
      if (remove) await deleteKeys(documents, table, page);
      found.items += page.length;
      for (const key of page) {
        const kind = kindOf(String(key[RESULTS_SORT_KEY]))?.name ?? "unregistered items";
        found.kinds[kind] = (found.kinds[kind] ?? 0) + 1;
      }
    }
    return found;
  };
  return {
    name: "results",
    table,
    count: (channel) => tally(channel, false),
    remove: (channel) => tally(channel, true),
  };
}
