import { MessageCounts, messageStreamRecords } from "convoseg/ingest";
import { describe, expect, it } from "vitest";

describe("messageStreamRecords", () => {
  it("takes Lambda's stream records as they come, images absent where the item was", () => {
    const keys = { conversation: { S: "general" }, key: { S: "m#1" } };
    expect(
      messageStreamRecords([
        { eventID: "a", dynamodb: { SequenceNumber: "0001", Keys: keys, NewImage: keys } },
      ]),
    ).toEqual([{ sequence: "0001", keys, oldImage: undefined, newImage: keys }]);
  });

  it("refuses a record that is not a DynamoDB stream record, naming its place", () => {
    expect(() => messageStreamRecords([{ dynamodb: { SequenceNumber: "1" } }, {}])).toThrow(
      /stream record 0 \(no eventID\) has no keys/,
    );
    expect(() => messageStreamRecords([{ eventID: "x", dynamodb: { Keys: {} } }])).toThrow(
      /stream record 0 \(x\)/,
    );
  });

  it("refuses a sequence number that is not digits before it reads or writes anything", async () => {
    const counts = new MessageCounts({ client: {} as never, tableName: "channels" });
    const keys = { conversation: { S: "general" }, key: { S: "m#1" } };
    const image = { ...keys, position: { S: "1" } };
    await expect(counts.apply([{ sequence: "12e4", keys, newImage: image }])).rejects.toThrow(
      /channel "general": stream sequence number 12e4 is not digits/,
    );
  });
});
