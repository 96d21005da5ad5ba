/**
 * How many messages each channel keeps, for the read API's channel list: a count on the channel's
 * marks item, kept from the messages table's stream (new and old images). The stream is the one
 * place every way a message comes and goes shows up: a put, a deletion mark, an erasure's or a
 * channel deletion's delete, and retention's TTL expiry. A message counts while its item has a
 * position and is not marked deleted, the rule the local `channels` command counts by.
 */
import {
  type AttributeValue,
  type DynamoDBClient,
  GetItemCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { isConditionFailure } from "../../base/dynamodb/index.js";
import { DELETED, PARTITION_KEY, POSITION } from "../../history/schema/index.js";
import { ChannelStateError, PipelineError } from "../../segmentation/pipeline/index.js";
import {
  CHANNEL_KEY,
  COUNTED_TO,
  channelItemKey,
  MARKS_ITEM,
  MESSAGE_COUNT,
} from "../../segmentation/pipeline/schema/index.js";

/** Read-and-update rounds per channel before another writer's updates are taken as a fault. */
const MAX_ROUNDS = 8;

/** One record of the messages table's stream, as far as counting needs it. */
export interface MessageStreamRecord {
  /** The record's sequence number in the stream (decimal digits). */
  sequence: string;
  /** The item before and after the change (absent where there was none). */
  oldImage?: Record<string, AttributeValue>;
  newImage?: Record<string, AttributeValue>;
  /** The item's keys (its channel is the partition key). */
  keys: Record<string, AttributeValue>;
}

/** A record of a DynamoDB stream as Lambda hands it over (the fields counting reads). */
export interface LambdaStreamRecord {
  eventID?: string;
  dynamodb?: {
    SequenceNumber?: string;
    Keys?: Record<string, unknown>;
    OldImage?: Record<string, unknown>;
    NewImage?: Record<string, unknown>;
  };
}

/**
 * Lambda's stream records as {@link MessageStreamRecord}s; one without keys or a sequence
 * number (not from a DynamoDB stream) is refused, naming it.
 */
export function messageStreamRecords(
  records: readonly LambdaStreamRecord[],
): MessageStreamRecord[] {
  return records.map((record, index) => {
    const change = record.dynamodb;
    if (change?.SequenceNumber === undefined || change.Keys === undefined) {
      throw new PipelineError(
        "PIPELINE_BAD_STREAM_RECORD",
        `count: stream record ${index} (${record.eventID ?? "no eventID"}) has no keys or sequence number: not a DynamoDB stream record`,
      );
    }
    return {
      sequence: change.SequenceNumber,
      keys: change.Keys as Record<string, AttributeValue>,
      oldImage: change.OldImage as Record<string, AttributeValue> | undefined,
      newImage: change.NewImage as Record<string, AttributeValue> | undefined,
    };
  });
}

/** A change to a channel's count: +1 or -1, at its place in the stream. */
interface CountStep {
  sequence: bigint;
  delta: number;
}

/** Whether a stored item is a message that counts. */
function counts(image: Record<string, AttributeValue> | undefined): number {
  if (image?.[POSITION] === undefined) return 0;
  return image[DELETED]?.BOOL === true ? 0 : 1;
}

/** Each channel's steps in stream order; records that change no count are left out. */
function countSteps(records: readonly MessageStreamRecord[]): Map<string, CountStep[]> {
  const byChannel = new Map<string, CountStep[]>();
  for (const record of records) {
    const delta = counts(record.newImage) - counts(record.oldImage);
    const channel = record.keys[PARTITION_KEY]?.S;
    if (delta === 0 || channel === undefined) continue;
    if (!/^\d{1,64}$/.test(record.sequence)) {
      throw new ChannelStateError(
        channel,
        `stream sequence number ${record.sequence} is not digits`,
      );
    }
    const steps = byChannel.get(channel) ?? [];
    steps.push({ sequence: BigInt(record.sequence), delta });
    byChannel.set(channel, steps);
  }
  for (const steps of byChannel.values()) {
    steps.sort((a, b) => (a.sequence < b.sequence ? -1 : a.sequence > b.sequence ? 1 : 0));
  }
  return byChannel;
}

/** What {@link MessageCounts.apply} did with a batch of records. */
export interface CountReport {
  /** Channels whose count changed. */
  updated: number;
  /** Steps already in a count (a retried batch): skipped. */
  repeated: number;
  /** Steps of channels without a marks item (deleted channels): dropped. */
  dropped: number;
}

export interface MessageCountsOptions {
  client: DynamoDBClient;
  /** The channels table (the marks items). */
  tableName: string;
}

/**
 * Applies stream records to the channels' counts exactly once, whatever is retried: each
 * channel's count carries the sequence number of the last record it took in, and an update is
 * conditioned on the one read, so a redelivered record (a retried batch, a lost answer) is
 * skipped and two writers of one channel never both count. DynamoDB Streams delivers the
 * records of one partition key (a channel's messages share one) in sequence-number order.
 * A channel whose marks item is gone (deleted) is not brought back by its messages' removals.
 */
export class MessageCounts {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;

  constructor(options: MessageCountsOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
  }

  async apply(records: readonly MessageStreamRecord[]): Promise<CountReport> {
    const report: CountReport = { updated: 0, repeated: 0, dropped: 0 };
    for (const [channel, steps] of countSteps(records)) {
      const outcome = await this.applySteps(channel, steps);
      if (outcome === "dropped") report.dropped += steps.length;
      else {
        report.repeated += steps.length - outcome;
        if (outcome > 0) report.updated++;
      }
    }
    return report;
  }

  /** The steps one channel takes in: how many were new, or "dropped" without a marks item. */
  private async applySteps(channel: string, steps: CountStep[]): Promise<number | "dropped"> {
    const key = channelItemKey(channel, MARKS_ITEM);
    for (let round = 1; round <= MAX_ROUNDS; round++) {
      const { Item: marks } = await this.client.send(
        new GetItemCommand({
          TableName: this.tableName,
          Key: key,
          ConsistentRead: true,
          ProjectionExpression: "#channel, #to",
          ExpressionAttributeNames: { "#channel": CHANNEL_KEY, "#to": COUNTED_TO },
        }),
      );
      if (marks === undefined) return "dropped";
      const countedTo = marks[COUNTED_TO]?.S;
      const fresh = steps.filter(
        (step) => countedTo === undefined || step.sequence > BigInt(countedTo),
      );
      if (fresh.length === 0) return 0;
      const delta = fresh.reduce((sum, step) => sum + step.delta, 0);
      try {
        await this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: key,
            UpdateExpression: "ADD #count :delta SET #to = :to",
            ConditionExpression:
              countedTo === undefined
                ? "attribute_exists(#channel) AND attribute_not_exists(#to)"
                : "attribute_exists(#channel) AND #to = :read",
            ExpressionAttributeNames: {
              "#channel": CHANNEL_KEY,
              "#count": MESSAGE_COUNT,
              "#to": COUNTED_TO,
            },
            ExpressionAttributeValues: {
              ":delta": { N: String(delta) },
              ":to": { S: String(fresh[fresh.length - 1].sequence) },
              ...(countedTo === undefined ? {} : { ":read": { S: countedTo } }),
            },
          }),
        );
        return fresh.length;
      } catch (error) {
        // Another writer counted, or the channel went, since the read: read again.
        if (!isConditionFailure(error)) throw error;
      }
    }
    throw new ChannelStateError(
      channel,
      `its message count changed under ${MAX_ROUNDS} updates in a row; the batch is retried`,
    );
  }
}
