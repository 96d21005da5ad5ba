import { describe, expect, it, vi } from "vitest";
import { LocalPipeline } from "../../local/pipeline.js";
import { stubLocalAws } from "../support/aws-env.js";
import { runCli } from "../support/cli.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { testSqsClient } from "../support/sqs.js";

const T0 = Date.UTC(2025, 0, 6);
const NOW = T0 + 10 * 86_400_000;

const cli = (args: string[]) => runCli(args, NOW);

describe("channel command", () => {
  it("shows a channel's state, and a reset re-delivers its segments with the same ids", async () => {
    stubLocalAws();
    const pipeline = await LocalPipeline.create({
      dynamodb: testDynamoDbClient(),
      sqs: testSqsClient(),
      settings: {
        maxSize: 2,
        settle: 86_400_000,
        minItems: 1,
        grace: 0,
        holdTimeoutMs: 60_000,
        maxArrivalsPerChannel: 100,
        leaseMs: 60_000,
        channelConcurrency: 1,
      },
    });
    await pipeline.ingest(
      ["1", "2", "3"].map((id, i) => ({ id, ts: T0 + i * 60_000, channel: "ops", text: id })),
      NOW,
    );
    await pipeline.tick(NOW);
    const first = (await pipeline.drain()).map((s) => s.segmentId);
    expect(first).toHaveLength(2);

    const table = ["--table", pipeline.config.channelsTable];
    const shown = await cli(["channel", "show", "ops", ...table]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      channel: "ops",
      dueAt: null,
      watermark: { id: "3", ts: T0 + 120_000 },
      lastSegment: first[1],
      outbox: { delivered: true, segments: first, dropped: 0, late: 0 },
      holds: [],
    });

    expect((await cli(["channel", "reset", "ops", ...table])).code).toBe(0);
    await pipeline.tick(NOW);
    expect((await pipeline.drain()).map((s) => s.segmentId)).toEqual(first);
  });

  it.each([
    [["channel"], /expected show, reset or delete/],
    [["channel", "show"], /expected one channel id/],
    [["channel", "drop", "x", "--table", "t"], /expected show, reset or delete/],
  ])("rejects %j with usage", async (args, message) => {
    vi.stubEnv("CHANNELS_TABLE", "channels");
    const { code, stderr } = await cli(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});
