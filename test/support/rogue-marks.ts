/**
 * A writer outside ingestion's protocol, as anyone with UpdateItem on the channels table's marks
 * item could be (the old ingest policy allowed `seq` and `h*`): it sets the sequence back and
 * places or removes holds at will. One for each channel store.
 */
import { type DynamoDBClient, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { channelItemKey, MARKS_ITEM } from "convoseg/pipeline/schema";
import type { MemoryChannelStore } from "convoseg/pipeline/store";

export interface RogueMarks {
  /** Sets the channel's sequence (null: removes it). */
  setSeq(channel: string, seq: bigint | null): Promise<void>;
  /** Places the hold `name` on `first` (null: removes it). */
  setHold(channel: string, name: string, first: bigint | null): Promise<void>;
}

/** The rogue writer on a channels table. */
export function dynamoDbRogueMarks(client: DynamoDBClient, tableName: string): RogueMarks {
  const update = (channel: string, attribute: string, value: bigint | null) =>
    client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: channelItemKey(channel, MARKS_ITEM),
        UpdateExpression: value === null ? "REMOVE #a" : "SET #a = :v",
        ExpressionAttributeNames: { "#a": attribute },
        ...(value === null ? {} : { ExpressionAttributeValues: { ":v": { N: value.toString() } } }),
      }),
    );
  return {
    setSeq: async (channel, seq) => void (await update(channel, "seq", seq)),
    setHold: async (channel, name, first) => void (await update(channel, name, first)),
  };
}

/** The rogue writer on the memory double: its marks, reached as the table's would be. */
export function memoryRogueMarks(store: MemoryChannelStore): RogueMarks {
  type Marks = { seq: bigint | null; holds: Map<string, bigint> };
  const marksOf = (channel: string) => {
    const all = (store as unknown as { marksOf: Map<string, Marks> }).marksOf;
    const marks = all.get(channel);
    if (marks === undefined) throw new Error(`rogue: channel ${channel} has no marks yet`);
    return marks;
  };
  return {
    async setSeq(channel, seq) {
      marksOf(channel).seq = seq;
    },
    async setHold(channel, name, first) {
      const { holds } = marksOf(channel);
      if (first === null) holds.delete(name);
      else holds.set(name, first);
    },
  };
}
