/**
 * The pipeline under the faults that used to lose messages or wedge a channel, against DynamoDB
 * Local and the SQS emulator: commits that land late, writer clocks behind, answers lost and
 * retried by the SDK, many long ids, huge messages, a queue that is gone for many leases, and
 * the due index drained fairly under a time budget.
 */
import { randomBytes } from "node:crypto";
import { DynamoDBClient, ScanCommand } from "@aws-sdk/client-dynamodb";
import { DeleteQueueCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { itemSize, MAX_ITEM_BYTES } from "convoseg/dynamodb";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { ChannelPositions, ingest } from "convoseg/ingest";
import type { TickSettings } from "convoseg/pipeline";
import { DUE_SHARDS, dueShardOf } from "convoseg/pipeline/schema";
import { DynamoDbChannelStore } from "convoseg/pipeline/store";
import { describe, expect, it, vi } from "vitest";
import { LocalPipeline, MetricTotals } from "../../../local/pipeline.js";
import { createSegmentQueue } from "../../../local/sqs.js";
import { testDynamoDbClient } from "../../support/dynamodb.js";
import { testSqsClient } from "../../support/sqs.js";
import { channelBudget } from "../../support/tick-budget.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.UTC(2025, 0, 6);

function settings(overrides: Partial<TickSettings> = {}): TickSettings {
  return {
    maxSize: 50,
    settle: HOUR,
    minItems: 1,
    grace: 0,
    maxArrivalsPerChannel: 5000,
    leaseMs: 1,
    channelConcurrency: 4,
    holdTimeoutMs: 60_000,
    ...overrides,
  };
}

async function pipeline(
  overrides: Partial<TickSettings> = {},
  clients: { dynamodb?: DynamoDBClient; sqs?: SQSClient } = {},
) {
  const metrics = new MetricTotals();
  const errors: unknown[] = [];
  const local = await LocalPipeline.create({
    dynamodb: clients.dynamodb ?? testDynamoDbClient(),
    sqs: clients.sqs ?? testSqsClient(),
    settings: settings(overrides),
    metrics,
    logger: { info() {}, warn() {}, error: (_m, attributes) => errors.push(attributes) },
    prefix: "faults",
  });
  return { local, metrics, errors };
}

const chat = (channel: string, count: number, start: number, prefix: string, gap = MINUTE) =>
  Array.from({ length: count }, (_, i) => ({
    id: `${prefix}-${String(i).padStart(5, "0")}`,
    ts: start + i * gap,
    channel,
    text: `${prefix} ${i}`,
  }));

/** Ticks at `now`, `now + step`, … while anything is due, draining the queue; the message ids. */
async function tickUntilIdle(local: LocalPipeline, from: number, step = HOUR, limit = 200) {
  const delivered: string[] = [];
  let now = from;
  for (let i = 0; i < limit; i++) {
    await local.tick(now);
    for (const segment of await local.drain()) delivered.push(...segment.messageIds);
    if ((await local.channels.earliestDue()) === null) break;
    now += step;
  }
  return delivered;
}

/** A client whose message puts wait until `open()` (a writer whose commits land late). */
function delayedWriterClient() {
  const client = testDynamoDbClient();
  let open = () => {};
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let waiting = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const item = (args as { input?: { Item?: { key?: { S?: string } } } }).input?.Item;
      // Message items only: the write has reserved its positions by then.
      if (context.commandName === "PutItemCommand" && item?.key?.S?.startsWith("m#")) {
        waiting++;
        await gate;
      }
      return next(args);
    },
    { step: "build", name: "delayCommits" },
  );
  return { client, open, waiting: () => waiting };
}

// Both ways of making streams: the faults must not care how a channel's messages are grouped.
for (const conversations of ["contiguous", "linked"] as const) {
  describe(`no silent loss between ingestion and the read position (${conversations})`, () => {
    it("reads a commit that lands long after its reservation, while ticks run", async () => {
      const { local, metrics } = await pipeline({ conversations });
      const slow = delayedWriterClient();
      const writer = new DynamoDbStore({
        client: slow.client,
        tableName: local.config.messagesTable,
        positions: new ChannelPositions({
          client: slow.client,
          tableName: local.config.channelsTable,
          now: () => T0,
        }),
      });
      await local.ingest(chat("c", 5, T0, "early"), T0);
      const late = chat("c", 5, T0 + 5 * MINUTE, "slow");
      const slowWrite = ingest(writer, late);
      await vi.waitFor(() => expect(slow.waiting()).toBeGreaterThan(0));
      // Another writer commits after it, and ticks run far past both, on both clocks.
      await local.ingest(chat("c", 5, T0 + 10 * MINUTE, "fast"), T0);
      const before = await tickUntilIdle(local, T0 + 3 * HOUR, HOUR, 3);
      expect(before).toEqual(chat("c", 5, T0, "early").map((m) => m.id));
      slow.open();
      expect((await slowWrite).stored).toHaveLength(5);
      const after = await tickUntilIdle(local, T0 + 6 * HOUR);
      expect([...before, ...after].sort()).toEqual(
        [...chat("c", 5, T0, "early"), ...late, ...chat("c", 5, T0 + 10 * MINUTE, "fast")]
          .map((m) => m.id)
          .sort(),
      );
      expect(metrics.get("ArrivalsBehindReadPosition")).toBe(0);
    });

    it("reads what a writer whose clock is an hour behind writes after a tick", async () => {
      const { local } = await pipeline({ conversations });
      await local.ingest(chat("c", 3, T0, "first"), T0);
      const first = await tickUntilIdle(local, T0 + 2 * HOUR);
      const realNow = Date.now.bind(Date);
      const behind = vi.spyOn(Date, "now").mockImplementation(() => realNow() - HOUR);
      try {
        await local.ingest(chat("c", 3, T0 + 4 * HOUR, "behind"), T0 + 4 * HOUR);
      } finally {
        behind.mockRestore();
      }
      const second = await tickUntilIdle(local, T0 + 6 * HOUR);
      expect([...first, ...second]).toEqual(
        [...chat("c", 3, T0, "first"), ...chat("c", 3, T0 + 4 * HOUR, "behind")].map((m) => m.id),
      );
    });

    it("recognises its own record when the answer was lost and the SDK retried it", async () => {
      const dynamodb = new DynamoDBClient({
        endpoint: (await import("vitest")).inject("dynamodbEndpoint"),
        region: "us-east-1",
        credentials: { accessKeyId: "test", secretAccessKey: "test" },
        maxAttempts: 3,
      });
      // Inside the SDK's retries: the first record's answer is lost after DynamoDB applied it.
      const answers: number[] = [];
      dynamodb.middlewareStack.add(
        (next, context) => async (args) => {
          const result = await next(args);
          const input = (args as { input?: { Key?: { item?: { S?: string } } } }).input;
          if (context.commandName === "UpdateItemCommand" && input?.Key?.item?.S === "state") {
            answers.push((result.response as { statusCode: number }).statusCode);
            if (answers.length === 1) {
              throw Object.assign(new Error("socket hang up after the write"), {
                name: "TimeoutError",
                $metadata: {},
              });
            }
          }
          return result;
        },
        { step: "deserialize", name: "loseFirstRecordAnswer" },
      );
      const { local, metrics } = await pipeline(
        { conversations, leaseMs: 15 * MINUTE },
        { dynamodb },
      );
      await local.ingest(chat("c", 4, T0, "m"), T0);
      await local.tick(T0 + 2 * HOUR);
      // The retry found its condition failed: by the tick's own write, which it recognised.
      expect(answers).toEqual([200, 400]);
      // Delivered in this tick, not one lease later.
      expect((await local.drain()).flatMap((s) => s.messageIds)).toEqual(
        chat("c", 4, T0, "m").map((m) => m.id),
      );
      expect(metrics.get("ChannelErrors")).toBe(0);
    });
  });

  describe(`channel state stays far below 400 KB (${conversations})`, () => {
    /** Every item of the channels table: its size by DynamoDB's rules. */
    async function itemSizes(client: DynamoDBClient, tableName: string): Promise<number[]> {
      const { Items = [] } = await client.send(new ScanCommand({ TableName: tableName }));
      return Items.map((item) =>
        itemSize(
          Object.fromEntries(Object.entries(item).map(([k, v]) => [k, v.S ?? v.N ?? v.B ?? v])),
        ),
      );
    }

    it("takes 5,001 arrivals with 64-character ids in one tick's reach and loses nothing", async () => {
      const { local, errors } = await pipeline({ conversations, maxSize: 500, settle: 2 * HOUR });
      const messages = Array.from({ length: 5001 }, (_, i) => ({
        id: randomBytes(48).toString("base64"),
        ts: T0 + i * 1000,
        channel: "busy",
      }));
      const result = await local.ingest(messages, T0);
      expect(result.stored).toHaveLength(5001);
      const delivered = await tickUntilIdle(local, T0 + 4 * HOUR);
      expect(errors).toEqual([]);
      expect(delivered.sort()).toEqual(messages.map((m) => m.id).sort());
      const sizes = await itemSizes(testDynamoDbClient(), local.config.channelsTable);
      expect(Math.max(...sizes)).toBeLessThan(MAX_ITEM_BYTES / 4);
    }, 120_000);

    it("delivers a channel of 300 KB messages by reference, each item under the limit", async () => {
      const { local, errors } = await pipeline({ conversations, maxSize: 4 });
      const messages = chat("huge", 6, T0, "h").map((m) => ({
        ...m,
        text: "x".repeat(300 * 1024),
      }));
      expect((await local.ingest(messages, T0)).stored).toHaveLength(6);
      const segments = [];
      for (let now = T0 + 2 * HOUR; segments.length < 2; now += HOUR) {
        await local.tick(now);
        segments.push(...(await local.drain()));
      }
      expect(errors).toEqual([]);
      expect(segments.flatMap((s) => s.messageIds)).toEqual(messages.map((m) => m.id));
      expect(segments.every((s) => s.reference !== undefined && s.messages === undefined)).toBe(
        true,
      );
    });

    it("keeps the state the same size while the queue is gone, over many leases, then recovers", async () => {
      const sqs = testSqsClient();
      const { local, metrics } = await pipeline({ conversations }, { sqs });
      await local.ingest(chat("c", 8, T0, "m"), T0);
      await sqs.send(new DeleteQueueCommand({ QueueUrl: local.config.queueUrl }));
      let bytes: number | undefined;
      for (let lease = 0; lease < 8; lease++) {
        await local.ingest(chat("c", 2, T0 + (3 + lease) * HOUR, `more${lease}`), T0 + 3 * HOUR);
        await new Promise((resolve) => setTimeout(resolve, 2));
        await local.tick(T0 + 3 * HOUR);
        const { stateBytes, record } = await local.channels.load("c");
        bytes ??= stateBytes;
        expect(stateBytes).toBe(bytes);
        expect(record.state.outbox.segments.flatMap((s) => s.messages.map((m) => m.id))).toEqual(
          chat("c", 8, T0, "m").map((m) => m.id),
        );
      }
      expect(metrics.get("ChannelErrors")).toBe(8);
      const name = new URL(local.config.queueUrl).pathname.split("/").pop() as string;
      await createSegmentQueue(sqs, name, { fifo: true });
      const delivered = await tickUntilIdle(local, T0 + 12 * HOUR);
      expect(new Set(delivered).size).toBe(delivered.length);
      expect(delivered).toHaveLength(8 + 8 * 2);
    });
  });
}

describe("due channels", () => {
  it("keeps a channel's earlier due time when ingestion marks it again", async () => {
    const { local } = await pipeline();
    await local.ingest(chat("c", 1, T0, "a"), T0);
    await local.ingest(chat("c", 1, T0 + MINUTE, "b"), T0 + 10 * MINUTE);
    expect((await local.channels.load("c")).marks.dueAt).toBe(T0);
  });

  it("drains the longest-waiting channels first, whichever shard holds them", async () => {
    const { local } = await pipeline({ channelConcurrency: 1 });
    // Channels of every shard, marked due in an order that is not the shards' order.
    const byShard = new Map<string, string[]>();
    for (
      let i = 0;
      byShard.size < DUE_SHARDS || [...byShard.values()].some((l) => l.length < 2);
      i++
    ) {
      const channel = `ch-${i}`;
      const list = byShard.get(dueShardOf(channel)) ?? [];
      if (list.length < 2) list.push(channel);
      byShard.set(dueShardOf(channel), list);
    }
    const order = [...byShard.entries()]
      .sort(([a], [b]) => Number(b) - Number(a))
      .flatMap(([, l]) => l);
    for (const [i, channel] of order.entries()) {
      await local.ingest(chat(channel, 1, T0, channel), T0 + i * MINUTE);
    }
    // The tick may take three channels: the three that waited longest go, from the last shard first.
    await local.tick(T0 + 10 * HOUR, channelBudget(3));
    const processed = (await local.drain()).map((s) => s.channel);
    expect(processed).toEqual(order.slice(0, 3));
    const store = new DynamoDbChannelStore({
      client: testDynamoDbClient(),
      tableName: local.config.channelsTable,
    });
    expect((await store.load(order[3])).marks.dueAt).toBe(T0 + 3 * MINUTE);
  });
});
