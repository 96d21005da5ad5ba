/**
 * {@link ApiSources} on DynamoDB: each method one request, eventually consistent (half the read
 * units of a strong read; a page a second behind is as good as any to a reader), each asking for
 * its consumed capacity so that `onRead` can count what a request cost (metrics, the benchmark).
 */
import {
  type AttributeValue,
  type DynamoDBClient,
  GetItemCommand,
  QueryCommand,
  ScanCommand,
} from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { projectionOf } from "../../base/dynamodb/index.js";
import { NAMED_ARRIVALS } from "../../history/dynamodb/index.js";
import {
  BY_POSITION_INDEX,
  CHANNEL_FACT_ATTRIBUTES,
  PARTITION_KEY as MESSAGES_PARTITION_KEY,
} from "../../history/schema/index.js";
import { KnowledgeItemError } from "../../knowledge/index.js";
import type { SegmentResult, TopicSupport } from "../../knowledge/store/index.js";
import {
  RESULTS_PARTITION_KEY,
  RESULTS_SORT_KEY,
  resultItemKey,
  TOPIC_PREFIX,
} from "../../knowledge/store/schema/index.js";
import {
  CHANNEL_KEY,
  ITEM_KEY,
  MARKS_ITEM,
  MESSAGE_COUNT,
} from "../../segmentation/pipeline/schema/index.js";
import type { ApiSources, ChannelsPosition, KeyedSupport, OptionalSources } from "./ports.js";

/** One request's cost: which call, how many items it returned, the read units it consumed. */
export interface ReadCost {
  operation: "Query" | "Scan" | "GetItem";
  items: number;
  units: number;
}

export interface DynamoDbApiSourcesOptions extends OptionalSources {
  client: DynamoDBClient;
  resultsTable: string;
  channelsTable: string;
  /** Read for the channel list's names, platforms and times (`describe`). */
  messagesTable: string;
  /**
   * How many messages a channel keeps.
   * @default the count on its marks item, kept from the messages table's stream (`MessageCounts`
   * in lib/intake/ingest); one GetItem
   */
  countMessages?: (channel: string) => Promise<number | null>;
  onRead?: (cost: ReadCost) => void;
}

/**
 * Sorts after every `topic#<key>#…` of that key and before the next key: `$` follows `#`, and
 * the keys are hex digits, which follow both.
 */
const afterKey = (topicKey: string) => `${TOPIC_PREFIX}${topicKey}$`;
/** Sorts after every topic entry (no other item kind begins with `topic$`). */
const TOPICS_END = "topic$";
const TOPIC_SORT_KEY = /^topic#([0-9a-f]{16})#/;

export function dynamoDbApiSources(options: DynamoDbApiSourcesOptions): ApiSources {
  const { client, resultsTable, channelsTable, messagesTable, onRead, questions } = options;
  const countMessages = options.countMessages ?? keptCount;

  /** The count on the channel's marks item, or null when it has none. */
  async function keptCount(channel: string): Promise<number | null> {
    const { Item, ...got } = await client.send(
      new GetItemCommand({
        TableName: channelsTable,
        Key: { [CHANNEL_KEY]: { S: channel }, [ITEM_KEY]: { S: MARKS_ITEM } },
        ProjectionExpression: "#count",
        ExpressionAttributeNames: { "#count": MESSAGE_COUNT },
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    onRead?.({ operation: "GetItem", items: Item === undefined ? 0 : 1, units: unitsOf(got) });
    const count = Item?.[MESSAGE_COUNT]?.N;
    // Below zero only where messages stored before the count began were removed: not a count.
    return count === undefined || Number(count) < 0 ? null : Number(count);
  }

  const facts = projectionOf(CHANNEL_FACT_ATTRIBUTES);

  /**
   * A channel's first (`forward`) or latest arrivals, as many as a name is looked for in, of
   * each only {@link CHANNEL_FACT_ATTRIBUTES} (`byPosition` fetches them from the table).
   */
  async function arrivals(channel: string, forward: boolean): Promise<Record<string, unknown>[]> {
    const page = await client.send(
      new QueryCommand({
        TableName: messagesTable,
        IndexName: BY_POSITION_INDEX,
        KeyConditionExpression: "#c = :c",
        ProjectionExpression: facts.ProjectionExpression,
        ExpressionAttributeNames: {
          "#c": MESSAGES_PARTITION_KEY,
          ...facts.ExpressionAttributeNames,
        },
        ExpressionAttributeValues: { ":c": { S: channel } },
        ScanIndexForward: forward,
        Limit: NAMED_ARRIVALS,
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    const items = (page.Items ?? []).map((item) => unmarshall(item));
    onRead?.({ operation: "Query", items: items.length, units: unitsOf(page) });
    return items;
  }

  /** One Query of the topic index after `afterTopicKey` (or `start`): at most `limit` entries. */
  async function queryTopics(
    channel: string,
    afterTopicKey: string | null,
    limit: number,
    start: Record<string, AttributeValue> | undefined,
  ): Promise<{ entries: KeyedSupport[]; last: Record<string, AttributeValue> | undefined }> {
    const page = await client.send(
      new QueryCommand({
        TableName: resultsTable,
        KeyConditionExpression: "#pk = :pk AND #sk BETWEEN :from AND :to",
        ExpressionAttributeNames: { "#pk": RESULTS_PARTITION_KEY, "#sk": RESULTS_SORT_KEY },
        ExpressionAttributeValues: {
          ":pk": { S: channel },
          ":from": { S: afterTopicKey === null ? TOPIC_PREFIX : afterKey(afterTopicKey) },
          ":to": { S: TOPICS_END },
        },
        Limit: limit,
        ExclusiveStartKey: start,
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    const entries = (page.Items ?? []).map((raw): KeyedSupport => {
      const { [RESULTS_SORT_KEY]: sortKey, ...support } = unmarshall(raw);
      const key = TOPIC_SORT_KEY.exec(String(sortKey));
      if (key === null || support.v !== 1) {
        throw new KnowledgeItemError(`${channel}/${String(sortKey)}`, "not a v1 topic entry");
      }
      return { topicKey: key[1], support: support as TopicSupport };
    });
    onRead?.({ operation: "Query", items: entries.length, units: unitsOf(page) });
    return { entries, last: page.LastEvaluatedKey };
  }

  return {
    async channels({ after, evaluate }) {
      const page = await client.send(
        new ScanCommand({
          TableName: channelsTable,
          Limit: evaluate,
          // The marks item is the one every channel the pipeline took a message of has.
          FilterExpression: "#item = :marks",
          ProjectionExpression: "#channel",
          ExpressionAttributeNames: { "#item": ITEM_KEY, "#channel": CHANNEL_KEY },
          ExpressionAttributeValues: { ":marks": { S: MARKS_ITEM } },
          ExclusiveStartKey:
            after === null
              ? undefined
              : { [CHANNEL_KEY]: { S: after.channel }, [ITEM_KEY]: { S: after.item } },
          ReturnConsumedCapacity: "TOTAL",
        }),
      );
      const items = (page.Items ?? []).map((item) => String(unmarshall(item)[CHANNEL_KEY]));
      onRead?.({ operation: "Scan", items: items.length, units: unitsOf(page) });
      const last = page.LastEvaluatedKey;
      const next: ChannelsPosition | null =
        last === undefined
          ? null
          : { channel: String(last[CHANNEL_KEY]?.S), item: String(last[ITEM_KEY]?.S) };
      return { channels: items, next };
    },

    async describe(channel) {
      const [first, latest, messages] = await Promise.all([
        arrivals(channel, true),
        arrivals(channel, false),
        countMessages(channel),
      ]);
      const said = (name: string) => {
        const value = latest.find((item) => typeof item[name] === "string")?.[name];
        return typeof value === "string" ? value : null;
      };
      const sent = (items: Record<string, unknown>[]) => {
        const kept = items.find((item) => item.deleted !== true && typeof item.ts === "number");
        return kept === undefined ? null : (kept.ts as number);
      };
      return {
        name: said("channelName"),
        platform: said("platform"),
        first: sent(first),
        last: sent(latest),
        messages,
      };
    },

    async topicEntries(channel, { afterTopicKey, limit }) {
      // One entry past the page: it tells whether the page's last topic is whole.
      const page = await queryTopics(channel, afterTopicKey, limit + 1, undefined);
      return {
        entries: page.entries,
        more: page.last !== undefined || page.entries.length > limit,
      };
    },

    async topicIndex(channel, { max }) {
      const entries: KeyedSupport[] = [];
      let start: Record<string, AttributeValue> | undefined;
      do {
        const page = await queryTopics(channel, null, max + 1 - entries.length, start);
        entries.push(...page.entries);
        start = page.last;
      } while (start !== undefined && entries.length <= max);
      return { entries: entries.slice(0, max), more: entries.length > max };
    },

    async known(channel) {
      const { Item, ...got } = await client.send(
        new GetItemCommand({
          TableName: channelsTable,
          Key: { [CHANNEL_KEY]: { S: channel }, [ITEM_KEY]: { S: MARKS_ITEM } },
          ProjectionExpression: "#channel",
          ExpressionAttributeNames: { "#channel": CHANNEL_KEY },
          ReturnConsumedCapacity: "TOTAL",
        }),
      );
      onRead?.({ operation: "GetItem", items: Item === undefined ? 0 : 1, units: unitsOf(got) });
      if (Item !== undefined) return true;
      const page = await client.send(
        new QueryCommand({
          TableName: resultsTable,
          KeyConditionExpression: "#pk = :pk",
          ExpressionAttributeNames: { "#pk": RESULTS_PARTITION_KEY },
          ExpressionAttributeValues: { ":pk": { S: channel } },
          ProjectionExpression: "#pk",
          Limit: 1,
          ReturnConsumedCapacity: "TOTAL",
        }),
      );
      onRead?.({ operation: "Query", items: page.Items?.length ?? 0, units: unitsOf(page) });
      return (page.Items?.length ?? 0) > 0;
    },

    async segment(channel, segmentId): Promise<SegmentResult | undefined> {
      const { Item, ...page } = await client.send(
        new GetItemCommand({
          TableName: resultsTable,
          Key: {
            [RESULTS_PARTITION_KEY]: { S: channel },
            [RESULTS_SORT_KEY]: { S: resultItemKey(segmentId) },
          },
          ReturnConsumedCapacity: "TOTAL",
        }),
      );
      onRead?.({ operation: "GetItem", items: Item === undefined ? 0 : 1, units: unitsOf(page) });
      if (Item === undefined) return undefined;
      const { [RESULTS_SORT_KEY]: sortKey, ...result } = unmarshall(Item);
      if (result.v !== 1) {
        throw new KnowledgeItemError(`${channel}/${String(sortKey)}`, "not a v1 result");
      }
      return result as SegmentResult;
    },

    ...(questions && {
      questions: {
        async questions(channel, query) {
          const { readUnits, ...page } = await questions.questions(channel, query);
          // The index's Queries (KnowledgeReader.questions); a source that does not report units is NaN.
          onRead?.({
            operation: "Query",
            items: page.items.length,
            units: readUnits ?? Number.NaN,
          });
          return page;
        },
      },
    }),
    ...(options.digest && { digest: options.digest }),
    ...(options.search && { search: options.search }),
    ...(options.stats && { stats: options.stats }),
    ...(options.corrections && { corrections: options.corrections }),
  };
}

function unitsOf(page: { ConsumedCapacity?: { CapacityUnits?: number } }): number {
  return page.ConsumedCapacity?.CapacityUnits ?? Number.NaN;
}
