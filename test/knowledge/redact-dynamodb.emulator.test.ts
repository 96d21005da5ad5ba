/**
 * Redaction on DynamoDB Local: the shared contract, a process killed after any of its AWS calls
 * then a retry, and what a lookup reads in a channel of many segments.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { documentClient } from "convoseg/dynamodb";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { KnowledgeRedactor } from "convoseg/knowledge/write";
import { beforeAll, describe, expect, it } from "vitest";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { createResultsTestTable, TEN_TEXTS } from "./fixtures.js";
import { describeRedaction, extractorFor, FakeMessageStates, NOW, segmentAt } from "./redaction.js";

let tableName: string;

beforeAll(async () => {
  tableName = await createResultsTestTable(testDynamoDbClient());
});

/** Every item of the channel, in key order, as JSON (sets as sorted arrays). */
async function dump(channel: string): Promise<string> {
  const { Items = [] } = await documentClient(testDynamoDbClient()).send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: "channel = :c",
      ExpressionAttributeValues: { ":c": channel },
      ConsistentRead: true,
    }),
  );
  return JSON.stringify(Items, (_, value) => (value instanceof Set ? [...value].sort() : value));
}

async function windowCount(channel: string): Promise<number> {
  return (JSON.parse(await dump(channel)) as { item: string }[]).filter((i) =>
    i.item.startsWith("window#"),
  ).length;
}

describeRedaction("DynamoDbResultStore", async () => ({
  store: new DynamoDbResultStore({ client: testDynamoDbClient(), tableName }),
  dump,
  windows: windowCount,
}));

/** A client that counts its requests and what its queries read, and may die after the n-th. */
function countingClient(crashAfter?: number) {
  const seen = { requests: 0, scanned: 0, dead: false };
  const client: DynamoDBClient = testDynamoDbClient();
  client.middlewareStack.add(
    (next) => async (args) => {
      if (seen.dead) throw new Error("the process is gone");
      const result = await next(args);
      seen.requests++;
      seen.scanned += Number((result.output as { ScannedCount?: number }).ScannedCount ?? 0);
      if (seen.requests === crashAfter) {
        seen.dead = true;
        throw new Error(`crashed after call ${seen.requests}`);
      }
      return result;
    },
    { step: "initialize", name: "countRequests" },
  );
  return { client, seen };
}

describe("DynamoDbResultStore: a redaction killed after any of its AWS calls", () => {
  it("ends, once retried, in the state of one that was not", async () => {
    const run = async (channel: string, crashAfter?: number) => {
      const store = new DynamoDbResultStore({ client: testDynamoDbClient(), tableName });
      const states = new FakeMessageStates();
      const { segment, messages } = segmentAt(channel, "s1", TEN_TEXTS, NOW);
      states.add(messages);
      await extractorFor(store).extract(segment, messages);
      const changes = [
        states.edit("s1-m1", "changed", NOW + 1),
        ...["s1-m4", "s1-m8", "s1-m9"].map((id) => states.delete(id)),
      ];
      const { client, seen } = countingClient(crashAfter);
      const dying = new KnowledgeRedactor({
        store: new DynamoDbResultStore({ client, tableName }),
        states,
      });
      const crashed = await dying.redact(channel, changes).then(
        () => false,
        (error: Error) => /crashed|gone/.test(error.message) || Promise.reject(error),
      );
      if (crashed) await new KnowledgeRedactor({ store, states }).redact(channel, changes);
      return { state: (await dump(channel)).replaceAll(channel, "C"), requests: seen.requests };
    };
    const clean = await run(`clean-${Date.now()}`);
    // Widths, 2 span queries, the result, 3 windows, 2 entries, the result's write.
    expect(clean.requests).toBeLessThanOrEqual(12);
    for (let crashAfter = 1; crashAfter <= clean.requests; crashAfter++) {
      const crashed = await run(`crash-${crashAfter}-${Date.now()}`, crashAfter);
      expect({ crashAfter, state: crashed.state }).toEqual({ crashAfter, state: clean.state });
    }
  });
});

describe("DynamoDbResultStore: finding a changed message's segment", () => {
  it("reads the spans near its time, not the channel's results", async () => {
    const channel = `many-${Date.now()}`;
    const store = new DynamoDbResultStore({ client: testDynamoDbClient(), tableName });
    const states = new FakeMessageStates();
    const extractor = extractorFor(store);
    for (let i = 0; i < 60; i++) {
      const { segment, messages } = segmentAt(
        channel,
        `s${String(i).padStart(2, "0")}`,
        ["a #boot issue", "fixed the #boot"],
        NOW + i * 600_000,
      );
      states.add(messages);
      await extractor.extract(segment, messages);
    }
    const { client, seen } = countingClient();
    const redactor = new KnowledgeRedactor({
      store: new DynamoDbResultStore({ client, tableName }),
      states,
    });
    const counts = await redactor.redact(channel, [states.delete("s30-m1")]);
    expect(counts).toMatchObject({ results: 1, topicEntriesUpdated: 1 });
    // The one span holding the time, and the next one at most: never the 60 results.
    expect(seen.scanned).toBeLessThanOrEqual(2);
    expect((await store.getResult(channel, "s30"))?.messageIds).toEqual(["s30-m0"]);
  });
});
