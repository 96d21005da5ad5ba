import type { Context } from "aws-lambda";
import { dueShardOf } from "convoseg/pipeline/schema";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LocalPipeline } from "../../local/pipeline.js";
import { stubLocalAws } from "../support/aws-env.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { closedAfterEach, startLambdaInvokeServer } from "../support/llm-servers.js";
import { testSqsClient } from "../support/sqs.js";

/** The deployed handler module, loaded the way Lambda loads it: configured by environment. */
async function loadHandler(environment: Record<string, string | undefined>) {
  vi.resetModules();
  stubLocalAws();
  for (const [name, value] of Object.entries(environment)) vi.stubEnv(name, value);
  return (await import("../../functions/segment/handler.js")).handler;
}

/** The fan-out worker's module, loaded the same way. */
async function loadWorker(environment: Record<string, string | undefined>) {
  vi.resetModules();
  stubLocalAws();
  for (const [name, value] of Object.entries(environment)) vi.stubEnv(name, value);
  return (await import("../../functions/segment/worker.js")).handler;
}

const settings = {
  maxSize: 500,
  settle: 60_000,
  minItems: 1,
  grace: 0,
  holdTimeoutMs: 60_000,
  maxArrivalsPerChannel: 100,
  leaseMs: 60_000,
  channelConcurrency: 2,
};

/**
 * The metrics the deployed handler publishes: Powertools writes them to stdout as EMF lines,
 * past vitest's console capture. They are taken off stdout, so the run's output stays clean,
 * and merged into one record of metric values to assert on.
 */
function captureMetrics(): Record<string, unknown> {
  const published: Record<string, unknown> = {};
  const write = process.stdout.write.bind(process.stdout);
  vi.spyOn(process.stdout, "write").mockImplementation((chunk, ...rest: unknown[]) => {
    const other = String(chunk)
      .split("\n")
      .filter((line) => {
        if (!line.startsWith('{"_aws"')) return true;
        const { _aws, ...values } = JSON.parse(line);
        Object.assign(published, values);
        return false;
      });
    const text = other.join("\n");
    return text.trim() === "" ? true : write(text, ...(rest as []));
  });
  return published;
}

afterEach(() => {
  vi.restoreAllMocks();
});

const context = (remainingMs: number) =>
  ({ getRemainingTimeInMillis: () => remainingMs }) as unknown as Context;

describe("segment Lambda", () => {
  it("fails at cold start, naming a bad setting", async () => {
    await expect(
      loadHandler({
        MESSAGES_TABLE: "m",
        CHANNELS_TABLE: "c",
        SEGMENT_QUEUE_URL: "q",
        MIN_ITEMS: "0",
      }),
    ).rejects.toThrow("segment: MIN_ITEMS must be an integer from 1 to 100000");
  });

  it("with ASK_LINKS, reads the extraction's settings at cold start, naming one that is missing", async () => {
    const base = { MESSAGES_TABLE: "m", CHANNELS_TABLE: "c", SEGMENT_QUEUE_URL: "q" };
    await expect(loadHandler({ ...base, ASK_LINKS: "yes" })).rejects.toThrow(
      'segment: ASK_LINKS must be true or false (got "yes")',
    );
    await expect(loadHandler({ ...base, ASK_LINKS: "true" })).rejects.toThrow(/RESULTS_TABLE/);
  });

  it("ticks the due channels and delivers their settled segments", async () => {
    const pipeline = await LocalPipeline.create({
      dynamodb: testDynamoDbClient(),
      sqs: testSqsClient(),
      settings,
    });
    const longAgo = Date.now() - 3_600_000;
    await pipeline.ingest(
      [
        { id: "1", ts: longAgo, channel: "ops", text: "deploy?" },
        { id: "2", ts: longAgo + 1000, channel: "ops", text: "done" },
      ],
      Date.now(),
    );
    const handler = await loadHandler({
      MESSAGES_TABLE: pipeline.config.messagesTable,
      CHANNELS_TABLE: pipeline.config.channelsTable,
      SEGMENT_QUEUE_URL: pipeline.config.queueUrl,
      SETTLE: "1m",
      GRACE: "0",
    });
    const metrics = captureMetrics();
    const summary = await handler({}, context(60_000));
    expect(summary).toMatchObject({ channels: 1, segments: 1, errors: 0, stoppedEarly: false });
    expect(metrics).toMatchObject({
      service: "segmenter",
      ChannelsProcessed: 1,
      SegmentsEmitted: 1,
      MessagesSegmented: 2,
    });
    const [segment] = await pipeline.drain();
    expect(segment.messages?.map((m) => m.text)).toEqual(["deploy?", "done"]);
  });

  it("takes no channel when the invocation has no time left", async () => {
    const handler = await loadHandler({
      MESSAGES_TABLE: "messages",
      CHANNELS_TABLE: "channels",
      SEGMENT_QUEUE_URL: "queue",
      BUDGET_MARGIN: "20s",
    });
    const metrics = captureMetrics();
    await expect(handler({}, context(10_000))).resolves.toMatchObject({
      channels: 0,
      stoppedEarly: true,
    });
    expect(metrics).toMatchObject({ TicksStoppedEarly: 1 });
  });

  const startLambda = closedAfterEach(startLambdaInvokeServer);

  it("with several workers, starts one per share and does no channel itself", async () => {
    const lambda = await startLambda(() => ({ status: 202, body: "" }));
    vi.stubEnv("AWS_ENDPOINT_URL_LAMBDA", lambda.url);
    const handler = await loadHandler({
      MESSAGES_TABLE: "messages",
      CHANNELS_TABLE: "channels",
      SEGMENT_QUEUE_URL: "queue",
      WORKERS: "3",
      WORKER_FUNCTION: "convoseg-worker",
    });
    const metrics = captureMetrics();
    await expect(handler({}, context(60_000))).resolves.toEqual({ workers: 3, invoked: 3 });
    expect(metrics).toMatchObject({ WorkersInvoked: 3 });
    // Invoked at once: in any order.
    const requests = lambda.requests
      .map((r) => [r.path, r.headers["x-amz-invocation-type"], r.body])
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    expect(requests).toEqual(
      [0, 1, 2].map((index) => [
        "/2015-03-31/functions/convoseg-worker/invocations",
        "Event",
        { share: { index, of: 3 } },
      ]),
    );
  });

  it("a worker ticks its share's channels only, and refuses an event without a share", async () => {
    const pipeline = await LocalPipeline.create({
      dynamodb: testDynamoDbClient(),
      sqs: testSqsClient(),
      settings,
    });
    const names = Array.from({ length: 20 }, (_, i) => `room-${i}`);
    const [mine, theirs] = ["0", "1"].map((shard) => names.find((c) => dueShardOf(c, 2) === shard));
    const longAgo = Date.now() - 3_600_000;
    await pipeline.ingest(
      [mine, theirs].map((channel, i) => ({ id: `${i}`, ts: longAgo, channel, text: "hi" })),
      Date.now(),
    );
    const worker = await loadWorker({
      MESSAGES_TABLE: pipeline.config.messagesTable,
      CHANNELS_TABLE: pipeline.config.channelsTable,
      SEGMENT_QUEUE_URL: pipeline.config.queueUrl,
      SETTLE: "1m",
      GRACE: "0",
      DUE_SHARDS: "2",
    });
    await expect(worker({ tick: 1 }, context(60_000))).rejects.toThrow(
      "segment worker event: share must be an object { index, of }",
    );
    const metrics = captureMetrics();
    const run = await worker({ share: { index: 0, of: 2 } }, context(60_000));
    expect(metrics).toMatchObject({ ChannelsProcessed: 1, SegmentsEmitted: 1 });
    expect(run).toMatchObject({ share: { index: 0, of: 2 }, busy: false, tick: { channels: 1 } });
    const segments = await pipeline.drain();
    expect(segments.map((s) => s.channel)).toEqual([mine]);
  });
});
