/**
 * The fanned-out tick against the real local servers: a share's claim on DynamoDB Local, several
 * workers draining the due index at once (each a process of its own, with its own clients)
 * while one dies right after each AWS call it makes in turn, and the dispatcher's Lambda Invoke
 * adapter against a scripted Lambda endpoint.
 */
import { LambdaClient } from "@aws-sdk/client-lambda";
import {
  LambdaWorkerInvoker,
  runShare,
  type TickSettings,
  tickDependencies,
  tickShares,
} from "convoseg/pipeline";
import type { SegmentMessageV1 } from "convoseg/pipeline/contract";
import { dueShardOf } from "convoseg/pipeline/schema";
import { describe, expect, it } from "vitest";
import { LocalPipeline, MetricTotals } from "../../../local/pipeline.js";
import { type CrashControl, InjectedCrash } from "../../support/crash.js";
import { testDynamoDbClient } from "../../support/dynamodb.js";
import { closedAfterEach, startLambdaInvokeServer } from "../../support/llm-servers.js";
import { testSqsClient } from "../../support/sqs.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.UTC(2025, 0, 6);
const WORKERS = 3;
const quiet = { info() {}, warn() {}, error() {} };

const settings: TickSettings = {
  maxSize: 50,
  settle: HOUR,
  minItems: 1,
  grace: 0,
  maxArrivalsPerChannel: 100,
  leaseMs: MINUTE,
  channelConcurrency: 2,
  holdTimeoutMs: MINUTE,
};

/** Two channels in each share of {@link WORKERS} workers over as many shards. */
const CHANNELS = tickShares(WORKERS).flatMap((share) =>
  Array.from({ length: 40 }, (_, i) => `room-${i}`)
    .filter((c) => Number(dueShardOf(c, WORKERS)) === share.index)
    .slice(0, 2),
);

/**
 * A worker's own DynamoDB and SQS clients, as a Lambda invocation has: every AWS call they make
 * is counted, and right after the `crashAt`-th the process is dead (no later call goes out).
 */
function workerClients(control: CrashControl) {
  const dynamodb = testDynamoDbClient();
  const sqs = testSqsClient();
  const crashAfterCall =
    (next: (args: unknown) => Promise<unknown>) =>
    async (args: unknown): Promise<unknown> => {
      if (control.dead) throw new InjectedCrash("the worker is dead");
      const result = await next(args);
      if (++control.calls === control.crashAt) {
        control.dead = true;
        throw new InjectedCrash(`after AWS call ${control.calls}`);
      }
      return result;
    };
  // Around the SDK's retries: one count per command, as the code under test sees it.
  const options = { step: "initialize", name: "crashAfterCall" } as const;
  dynamodb.middlewareStack.add(crashAfterCall as never, options);
  sqs.middlewareStack.add(crashAfterCall as never, options);
  return { dynamodb, sqs };
}

type Phase = "open" | "settle";

/**
 * Three messages per channel; a tick while their conversations are open (each channel records
 * its state), then one after they settled (each delivers its segment), then ticks until nothing
 * is due. Every tick runs all workers at once; in `phase`, worker 0 dies after AWS call
 * `crashAt` (0: never). Returns the segments received, and how many calls worker 0 made.
 */
async function drainWithWorkers(phase: Phase, crashAt: number) {
  const clock = { wall: T0 };
  const local = await LocalPipeline.create({
    dynamodb: testDynamoDbClient(),
    sqs: testSqsClient(),
    settings,
    dueShards: WORKERS,
    workers: WORKERS,
    wallNow: () => clock.wall,
    prefix: "fanout",
  });
  await local.ingest(
    CHANNELS.flatMap((channel) =>
      [0, 1, 2].map((i) => ({ id: `${channel}-${i}`, ts: T0 + i * MINUTE, channel, text: "hi" })),
    ),
    T0,
  );
  const received: SegmentMessageV1[] = [];
  let calls = 0;
  const tick = async (now: number, crashing: boolean) => {
    await Promise.all(
      tickShares(WORKERS).map(async (share) => {
        const control: CrashControl = {
          calls: 0,
          crashAt: crashing && share.index === 0 ? crashAt : 0,
        };
        const deps = tickDependencies(local.config, {
          ...workerClients(control),
          metrics: new MetricTotals(),
          logger: quiet,
          now: () => now,
          wallNow: () => clock.wall,
        });
        await runShare(deps, share, { until: clock.wall + settings.leaseMs }).catch((error) => {
          if (!(error instanceof InjectedCrash)) throw error;
        });
        if (share.index === 0 && crashing) calls = control.calls;
      }),
    );
    received.push(...(await local.drain()));
    // Past every lease and claim: what a dead worker left is taken up by the next tick.
    clock.wall += settings.leaseMs + 1;
  };
  await tick(T0 + 5 * MINUTE, phase === "open");
  const settled = T0 + 2 * MINUTE + settings.settle + 5 * MINUTE;
  await tick(settled, phase === "settle");
  for (let i = 0; i < 5 && (await local.channels.earliestDue()) !== null; i++) {
    await tick(settled, false);
  }
  expect(await local.channels.earliestDue()).toBe(null);
  return { received, calls };
}

/** Each channel's one segment, every message in it once; a resent segment is the same one. */
function expectEachChannelOnce(received: SegmentMessageV1[]) {
  const byId = new Map<string, string[]>();
  for (const segment of received) {
    const earlier = byId.get(segment.segmentId);
    if (earlier !== undefined) expect(segment.messageIds).toEqual(earlier);
    byId.set(segment.segmentId, segment.messageIds);
  }
  const expected = CHANNELS.map((c) => [0, 1, 2].map((i) => `${c}-${i}`));
  expect([...byId.values()].sort()).toEqual(expected.sort());
}

describe("several workers draining the due index at once", () => {
  it("deliver each segment once, and claim their shares on DynamoDB", async () => {
    const { received } = await drainWithWorkers("open", 0);
    expect(received).toHaveLength(CHANNELS.length);
    expectEachChannelOnce(received);
  });

  it.each<Phase>(["open", "settle"])(
    "lose nothing when a worker dies after any AWS call of the %s tick",
    async (phase) => {
      // A clean run first, to learn how many calls the worker makes in that tick.
      const { calls } = await drainWithWorkers(phase, Number.MAX_SAFE_INTEGER);
      expect(calls).toBeGreaterThan(6);
      for (let crashAt = 1; crashAt <= calls; crashAt++) {
        const { received } = await drainWithWorkers(phase, crashAt);
        expectEachChannelOnce(received);
      }
    },
    240_000,
  );
});

describe("a share's claim on DynamoDB", () => {
  it("is held by one owner until it runs out or is released, and is no channel's item", async () => {
    const local = await LocalPipeline.create({
      dynamodb: testDynamoDbClient(),
      sqs: testSqsClient(),
      settings,
      prefix: "claims",
    });
    const share = { index: 1, of: 2 };
    const { channels } = local;
    expect(await channels.claimShare(share, "a", T0 + MINUTE, T0)).toBe(true);
    expect(await channels.claimShare(share, "b", T0 + MINUTE, T0 + 1)).toBe(false);
    expect(await channels.claimShare({ index: 0, of: 2 }, "b", T0 + MINUTE, T0)).toBe(true);
    await channels.releaseShare(share, "b");
    expect(await channels.claimShare(share, "c", T0 + MINUTE, T0 + 2)).toBe(false);
    expect(await channels.claimShare(share, "c", T0 + 2 * MINUTE, T0 + MINUTE)).toBe(true);
    await channels.releaseShare(share, "c");
    expect(await channels.claimShare(share, "d", T0 + 3 * MINUTE, T0 + MINUTE)).toBe(true);
    // A channel whose id is a claim's partition reads as a fresh channel.
    const snapshot = await channels.load("due-share/1/2");
    expect(snapshot.record.version).toBe(0);
    expect(snapshot.marks.dueAt).toBe(null);
  });
});

describe("starting workers through Lambda's Invoke", () => {
  const start = closedAfterEach(startLambdaInvokeServer);
  const client = (url: string, maxAttempts = 3) =>
    new LambdaClient({
      endpoint: url,
      region: "us-east-1",
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
      maxAttempts,
    });

  it("queues an asynchronous invocation with the share, retrying a throttle", async () => {
    const server = await start([
      {
        status: 429,
        headers: { "x-amzn-errortype": "TooManyRequestsException" },
        body: {
          Reason: "ReservedFunctionConcurrentInvocationLimitExceeded",
          message: "Rate exceeded",
        },
      },
      { status: 202, body: "" },
    ]);
    const invoker = new LambdaWorkerInvoker({ client: client(server.url), functionName: "worker" });
    await invoker.invoke({ index: 2, of: 4 });
    expect(server.requests).toHaveLength(2);
    for (const request of server.requests) {
      expect(request.path).toBe("/2015-03-31/functions/worker/invocations");
      expect(request.headers["x-amz-invocation-type"]).toBe("Event");
      expect(request.body).toEqual({ share: { index: 2, of: 4 } });
    }
  });

  it("fails when Lambda keeps refusing, or did not queue the event", async () => {
    const refusing = await start(() => ({
      status: 500,
      headers: { "x-amzn-errortype": "ServiceException" },
      body: { message: "internal failure" },
    }));
    const invoker = new LambdaWorkerInvoker({ client: client(refusing.url, 2), functionName: "w" });
    await expect(invoker.invoke({ index: 0, of: 2 })).rejects.toThrow("internal failure");
    expect(refusing.requests).toHaveLength(2);
    const answering = await start([{ status: 200, body: {} }]);
    const synchronous = new LambdaWorkerInvoker({
      client: client(answering.url),
      functionName: "w",
    });
    await expect(synchronous.invoke({ index: 1, of: 2 })).rejects.toThrow(
      "lambda w: share 1/2 not queued (status 200)",
    );
  });
});
