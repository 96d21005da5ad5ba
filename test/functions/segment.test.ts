import type { Context } from "aws-lambda";
import { describe, expect, it, vi } from "vitest";
import { LocalPipeline } from "../../local/pipeline.js";
import { stubLocalAws } from "../support/aws-env.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { testSqsClient } from "../support/sqs.js";

/** The deployed handler module, loaded the way Lambda loads it: configured by environment. */
async function loadHandler(environment: Record<string, string | undefined>) {
  vi.resetModules();
  stubLocalAws();
  for (const [name, value] of Object.entries(environment)) vi.stubEnv(name, value);
  return (await import("../../functions/segment/handler.js")).handler;
}

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

  it("ticks the due channels and delivers their settled segments", async () => {
    const pipeline = await LocalPipeline.create({
      dynamodb: testDynamoDbClient(),
      sqs: testSqsClient(),
      settings: {
        maxSize: 500,
        settle: 60_000,
        minItems: 1,
        grace: 0,
        holdTimeoutMs: 60_000,
        maxArrivalsPerChannel: 100,
        leaseMs: 60_000,
        channelConcurrency: 2,
      },
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
    const summary = await handler({}, context(60_000));
    expect(summary).toMatchObject({ channels: 1, segments: 1, errors: 0, stoppedEarly: false });
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
    await expect(handler({}, context(10_000))).resolves.toMatchObject({
      channels: 0,
      stoppedEarly: true,
    });
  });
});
