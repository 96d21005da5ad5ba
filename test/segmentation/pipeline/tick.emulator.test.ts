/**
 * The scheduled pipeline end to end against DynamoDB Local and the SQS emulator: the six
 * guarantees of `docs/specs/pipeline.md`, with crashes injected after AWS calls.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { compareRefs } from "convoseg/identity";
import type { ChatMessage } from "convoseg/messages";
import type { TickSettings } from "convoseg/pipeline";
import type { SegmentMessageV1 } from "convoseg/pipeline/contract";
import { ConversationSegmenter } from "convoseg/segmenter";
import { describe, expect, it } from "vitest";
import { LocalPipeline, MetricTotals } from "../../../local/pipeline.js";
import { type ReplayOptions, type ReplayResult, replay } from "../../../local/replay.js";
import { sampleChat } from "../../../local/sample.js";
import { testDynamoDbClient } from "../../support/dynamodb.js";
import { testSqsClient } from "../../support/sqs.js";
import { channelBudget } from "../../support/tick-budget.js";

const MINUTE = 60_000;
const T0 = Date.UTC(2025, 0, 6);
const TICK = 15 * MINUTE;

type ChatLine = ChatMessage;

/** Chat in a few channels: ties, short lulls, lulls below settle, and silences beyond it. */
const chat = (seed: number, channels: string[], perChannel: number, settle: number): ChatLine[] =>
  sampleChat({ seed, channels, perChannel, settle, start: T0 });

function settings(overrides: Partial<TickSettings> = {}): TickSettings {
  return {
    maxSize: 5,
    settle: 2 * 60 * MINUTE,
    minItems: 1,
    grace: 0,
    holdTimeoutMs: 60_000,
    maxArrivalsPerChannel: 1000,
    leaseMs: 60_000,
    channelConcurrency: 2,
    ...overrides,
  };
}

/** What this test needs of an SDK client's middleware stack, whichever client it is. */
interface MiddlewareStack {
  add(
    middleware: (next: (args: unknown) => Promise<unknown>) => (args: unknown) => Promise<unknown>,
    options: { step: "initialize"; name: string },
  ): void;
}

/**
 * Counts the calls of the given clients together and, while armed, fails right after the
 * `crashAt`-th one completes: the effect of a process dying after that AWS call.
 */
function crashAfter(crashAt: number, ...clients: (DynamoDBClient | SQSClient)[]) {
  const control = { armed: false, calls: 0 };
  for (const client of clients) {
    (client.middlewareStack as unknown as MiddlewareStack).add(
      (next) => async (args) => {
        const result = await next(args);
        if (control.armed && ++control.calls === crashAt) {
          throw Object.assign(new Error(`injected crash after call ${crashAt}`), {
            name: "InjectedCrash",
          });
        }
        return result;
      },
      { step: "initialize", name: "crashInjector" },
    );
  }
  return control;
}

interface Replay extends ReplayResult {
  metrics: MetricTotals;
  pipeline: LocalPipeline;
}

/** Replays `lines` through a fresh pipeline with 15-minute ticks (see local/replay.ts). */
async function replayChat(
  lines: ChatLine[],
  tickSettings: TickSettings,
  options: Omit<ReplayOptions, "tickMs"> & { dynamodb?: DynamoDBClient; sqs?: SQSClient } = {},
): Promise<Replay> {
  const metrics = new MetricTotals();
  const pipeline = await LocalPipeline.create({
    dynamodb: options.dynamodb ?? testDynamoDbClient(),
    sqs: options.sqs ?? testSqsClient(),
    settings: tickSettings,
    metrics,
    prefix: "tick",
  });
  const result = await replay(pipeline, lines, { ...options, tickMs: TICK });
  return { ...result, metrics, pipeline };
}

/** One segmenter call per channel over its final stream, in the product's order. */
function reference(lines: ChatLine[], s: TickSettings): Map<string, string[][]> {
  const segmenter = new ConversationSegmenter({
    maxSize: s.maxSize,
    settle: s.settle,
    minItems: s.minItems,
  });
  const byChannel = new Map<string, ChatLine[]>();
  for (const line of lines)
    byChannel.set(line.channel, [...(byChannel.get(line.channel) ?? []), line]);
  const result = new Map<string, string[][]>();
  for (const [channel, list] of byChannel) {
    const sorted = list.sort((a, b) => compareRefs(a, b));
    const segments = segmenter.closedSegments(sorted, Number.MAX_SAFE_INTEGER, (m) => m.ts);
    result.set(
      channel,
      segments.map((segment) => segment.map((m) => m.id)),
    );
  }
  return result;
}

/** Distinct segments per channel in delivery order; a redelivery must repeat the same content. */
function distinct(delivered: SegmentMessageV1[]): Map<string, SegmentMessageV1[]> {
  const seen = new Map<string, SegmentMessageV1>();
  const byChannel = new Map<string, SegmentMessageV1[]>();
  for (const segment of delivered) {
    const earlier = seen.get(segment.segmentId);
    if (earlier) {
      expect(segment.messageIds).toEqual(earlier.messageIds);
      continue;
    }
    seen.set(segment.segmentId, segment);
    byChannel.set(segment.channel, [...(byChannel.get(segment.channel) ?? []), segment]);
  }
  return byChannel;
}

/**
 * Checks guarantees 1 to 3: per channel, the distinct delivered segments are those of one big
 * run, in order, none late; the dropped count covers what the reference drops (exactly, unless a
 * crash made the report repeat: counts are at least once).
 */
function expectSameAsOneBigRun(
  result: Replay,
  lines: ChatLine[],
  s: TickSettings,
  crashed = false,
): void {
  const expected = reference(lines, s);
  const actual = distinct(result.delivered);
  for (const [channel, segments] of expected) {
    const mine = actual.get(channel) ?? [];
    expect(mine.every((segment) => !segment.late)).toBe(true);
    expect(mine.map((segment) => segment.messageIds)).toEqual(segments);
  }
  const inSegments = new Set([...expected.values()].flat(2));
  const dropped = lines.length - inSegments.size;
  if (crashed) expect(result.metrics.get("DroppedMessages")).toBeGreaterThanOrEqual(dropped);
  else expect(result.metrics.get("DroppedMessages")).toBe(dropped);
}

/**
 * Replays once to count the AWS calls the ticks make, then once per crash point, crashing right
 * after that call: the delivered segments must still be exactly those of one big run.
 */
async function expectCrashSafety(
  lines: ChatLine[],
  s: TickSettings,
  crashPoints: (calls: number) => number[],
): Promise<void> {
  const armed = (control: { armed: boolean }) => ({
    beforeTick: () => {
      control.armed = true;
    },
    afterTick: () => {
      control.armed = false;
    },
  });
  const counting = [testDynamoDbClient(), testSqsClient()] as const;
  const count = crashAfter(0, ...counting);
  await replayChat(lines, s, { ...armed(count), dynamodb: counting[0], sqs: counting[1] });
  expect(count.calls).toBeGreaterThan(10);
  for (const crashAt of crashPoints(count.calls)) {
    const clients = [testDynamoDbClient(), testSqsClient()] as const;
    const crash = crashAfter(crashAt, ...clients);
    const result = await replayChat(lines, s, {
      ...armed(crash),
      dynamodb: clients[0],
      sqs: clients[1],
    });
    // The crash hit one channel's work (counted), the tick as a whole, or a call its code retries.
    expect(crash.calls, `crash after call ${crashAt}`).toBeGreaterThanOrEqual(crashAt);
    expect(result.metrics.get("ChannelErrors") + result.failedTicks).toBeLessThanOrEqual(1);
    expectSameAsOneBigRun(result, lines, s, true);
  }
}

const channels = ["alpha", "beta", "gamma"];

describe("segmentation pipeline", () => {
  it.each([1, 3])(
    "delivers exactly the segments of one big run, nothing twice (minItems %i)",
    async (minItems) => {
      const s = settings({ minItems });
      const lines = chat(7 + minItems, channels, 40, s.settle);
      const result = await replayChat(lines, s);
      expectSameAsOneBigRun(result, lines, s);
      const ids = result.delivered.map((segment) => segment.segmentId);
      expect(new Set(ids).size).toBe(ids.length);
      for (const segment of result.delivered) {
        expect(segment.messages?.map((m) => m.text)).toEqual(
          segment.messageIds.map((id) => `message ${Number(id.split("-")[1])}`),
        );
      }
      expect(await result.pipeline.channels.earliestDue()).toBeNull();
    },
  );

  it("survives a crash after any AWS call of a tick: nothing lost, nothing changed", async () => {
    // A lease of 1 ms: the segments a crashed tick recorded are resent by the very next tick.
    const s = settings({ minItems: 2, leaseMs: 1 });
    await expectCrashSafety(chat(99, ["alpha", "beta"], 18, s.settle), s, (calls) =>
      Array.from({ length: 12 }, (_, i) => 1 + Math.floor((i * calls) / 12)),
    );
  }, 300_000);

  it("survives a crash after every single AWS call of a small replay", async () => {
    const s = settings({ maxSize: 3, minItems: 2, leaseMs: 1 });
    await expectCrashSafety(chat(21, ["solo"], 9, s.settle), s, (calls) =>
      Array.from({ length: calls }, (_, i) => i + 1),
    );
  }, 600_000);

  it("delivers nothing twice when two ticks run at once", async () => {
    const s = settings({ minItems: 2 });
    const lines = chat(5, channels, 30, s.settle);
    const sqs = testSqsClient();
    const sent: string[] = [];
    sqs.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === "SendMessageBatchCommand") {
          const input = (args as { input: { Entries: { MessageDeduplicationId?: string }[] } })
            .input;
          for (const entry of input.Entries) sent.push(entry.MessageDeduplicationId ?? "");
        }
        return next(args);
      },
      { step: "initialize", name: "sentRecorder" },
    );
    const result = await replayChat(lines, s, { sqs, overlap: true });
    expect(sent.length).toBeGreaterThan(10);
    expect(new Set(sent).size).toBe(sent.length);
    expectSameAsOneBigRun(result, lines, s);
  });

  it("delivers late messages in a late segment naming the segment they belong after", async () => {
    const s = settings();
    const lines = chat(11, ["alpha"], 25, s.settle);
    const sorted = [...lines].sort(compareRefs);
    const late: ChatLine[] = [
      { id: "late-1", ts: sorted[3].ts, channel: "alpha", text: "back-dated" },
      { id: "late-2", ts: sorted[12].ts + 1, channel: "alpha", text: "lagging" },
    ];
    const result = await replayChat(lines, s, { late });
    const normal = result.delivered.filter((segment) => !segment.late);
    const lateSegments = result.delivered.filter((segment) => segment.late);
    expect(normal.map((segment) => segment.messageIds)).toEqual(reference(lines, s).get("alpha"));
    expect(lateSegments.flatMap((segment) => segment.messageIds).sort()).toEqual([
      "late-1",
      "late-2",
    ]);
    const known = new Set(normal.map((segment) => segment.segmentId));
    for (const segment of lateSegments) expect(known.has(segment.belongsAfter ?? "")).toBe(true);
    expect(result.metrics.get("LateMessages")).toBe(2);
  });

  it("isolates a broken channel: the others go on, it is counted and stays due", async () => {
    const s = settings();
    const dynamodb = testDynamoDbClient();
    const pipeline = await LocalPipeline.create({ dynamodb, sqs: testSqsClient(), settings: s });
    const now = T0 + 10 * s.settle;
    await pipeline.ingest(
      [
        { id: "1", ts: T0, channel: "good", text: "fine" },
        { id: "1", ts: T0, channel: "broken", text: "fine" },
      ],
      now,
    );
    // An item of a future schema version, written directly: this channel cannot be read.
    await dynamodb.send(
      new PutCommand({
        TableName: pipeline.config.messagesTable,
        Item: {
          conversation: "broken",
          key: "m#2",
          position: "00000000000000000001",
          v: 2,
          id: "2",
          ts: T0,
        },
      }),
    );
    const summary = await pipeline.tick(now);
    expect(summary.errors).toBe(1);
    expect((await pipeline.drain()).map((segment) => segment.channel)).toEqual(["good"]);
    const due: string[] = [];
    for await (const { channel } of pipeline.channels.dueChannels(now)) due.push(channel);
    expect(due).toEqual(["broken"]);
  });

  it("stops taking channels when the budget is spent and resumes them next tick", async () => {
    const s = settings();
    const metrics = new MetricTotals();
    const pipeline = await LocalPipeline.create({
      dynamodb: testDynamoDbClient(),
      sqs: testSqsClient(),
      settings: { ...s, channelConcurrency: 1 },
      metrics,
    });
    const now = T0 + 10 * s.settle;
    await pipeline.ingest(
      channels.map((channel) => ({ id: "1", ts: T0, channel, text: "x" })),
      now,
    );
    // The tick may take one channel.
    const first = await pipeline.tick(now, channelBudget(1));
    expect(first).toMatchObject({ channels: 1, stoppedEarly: true });
    expect(metrics.get("OldestDueAgeMs")).toBe(0);
    // The two channels left behind have waited one tick when the next one comes.
    const second = await pipeline.tick(now + TICK);
    expect(second).toMatchObject({ channels: 2, stoppedEarly: false });
    expect(metrics.get("OldestDueAgeMs")).toBe(TICK);
    expect(metrics.get("TicksStoppedEarly")).toBe(1);
    const delivered = await pipeline.drain();
    expect(delivered.map((segment) => segment.channel).sort()).toEqual([...channels].sort());
  });

  it("re-ingesting the same messages delivers nothing new", async () => {
    const s = settings();
    const lines = chat(3, ["alpha"], 12, s.settle);
    const pipeline = await LocalPipeline.create({
      dynamodb: testDynamoDbClient(),
      sqs: testSqsClient(),
      settings: s,
    });
    const now = Math.max(...lines.map((l) => l.ts)) + 2 * s.settle;
    await pipeline.ingest(lines, now);
    await pipeline.tick(now);
    const first = await pipeline.drain();
    await pipeline.ingest(lines, now + TICK);
    await pipeline.tick(now + TICK);
    expect(await pipeline.drain()).toEqual([]);
    expect(first.flatMap((segment) => segment.messageIds)).toHaveLength(lines.length);
  });
});
