/**
 * The fanned-out tick's pure parts: shares that partition the due index, the worker's event, the
 * dispatcher's handling of workers that cannot be started, and a share's claim.
 */

import { MemoryStore } from "convoseg/history";
import { ingest } from "convoseg/ingest";
import {
  DispatchError,
  dispatchTick,
  parseWorkerEvent,
  runShare,
  type TickDependencies,
  type TickShare,
  tickShares,
} from "convoseg/pipeline";
import { dueShardOf, dueShardsRead, shareShards } from "convoseg/pipeline/schema";
import { MemoryChannelStore } from "convoseg/pipeline/store";
import { describe, expect, it } from "vitest";
import { MetricTotals } from "../../../local/pipeline.js";

const MINUTE = 60_000;
const T0 = Date.UTC(2025, 0, 6);
const quiet = { info() {}, warn() {}, error() {} };

describe("tick shares", () => {
  it.each([
    [1, 1],
    [4, 2],
    [4, 4],
    [8, 3],
    [7, 7],
    [1000, 64],
  ])("give each of %i shards to exactly one of %i workers", (shards, workers) => {
    const read = dueShardsRead(shards);
    const owned = tickShares(workers).map((share) => shareShards(read, share));
    expect(owned.flat().sort()).toEqual([...read].sort());
    for (const part of owned) expect(part.length).toBeGreaterThan(0);
    // As even as the counts allow.
    const sizes = owned.map((part) => part.length);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
  });

  it("split the due channels among the workers, each in its own shards", async () => {
    const clock = { now: T0 };
    const channels = new MemoryChannelStore(() => clock.now, 6);
    const store = new MemoryStore({ positions: channels });
    const names = Array.from({ length: 60 }, (_, i) => `c${i}`);
    await ingest(
      store,
      names.map((channel) => ({ id: `${channel}-1`, ts: T0, channel, text: "hi" })),
    );
    const due = async (share?: TickShare) => {
      const found: string[] = [];
      for await (const { channel } of channels.dueChannels(T0, share)) found.push(channel);
      return found;
    };
    const all = await due();
    expect(all.sort()).toEqual([...names].sort());
    const parts = await Promise.all(tickShares(4).map(due));
    expect(parts.flat().sort()).toEqual(all);
    for (const [index, part] of parts.entries()) {
      for (const channel of part) expect(Number(dueShardOf(channel, 6)) % 4).toBe(index);
    }
  });
});

describe("the worker's event", () => {
  it("is the share the dispatcher sends", () => {
    expect(parseWorkerEvent({ share: { index: 2, of: 4 } })).toEqual({ index: 2, of: 4 });
  });

  it.each([
    [{}, "segment worker event: share must be an object { index, of }"],
    [null, "share must be an object"],
    [{ share: { index: 0 } }, "share.of must be an integer from 1 to 1000 (got undefined)"],
    [{ share: { index: 0, of: 0 } }, "share.of must be an integer from 1 to 1000 (got 0)"],
    [{ share: { index: 4, of: 4 } }, "share.index must be an integer from 0 to 3 (got 4)"],
    [{ share: { index: "1", of: 4 } }, 'share.index must be an integer from 0 to 3 (got "1")'],
    [{ share: { index: -1, of: 4 } }, "share.index must be an integer from 0 to 3 (got -1)"],
  ])("refuses %j, naming the field", (event, message) => {
    expect(() => parseWorkerEvent(event)).toThrow(message);
  });
});

describe("the dispatcher", () => {
  it("starts one worker per share", async () => {
    const started: TickShare[] = [];
    const metrics = new MetricTotals();
    const summary = await dispatchTick({ invoke: async (share) => void started.push(share) }, 3, {
      metrics,
      logger: quiet,
    });
    expect(summary).toEqual({ workers: 3, invoked: 3 });
    expect(started).toEqual([
      { index: 0, of: 3 },
      { index: 1, of: 3 },
      { index: 2, of: 3 },
    ]);
    expect(metrics.get("WorkersInvoked")).toBe(3);
  });

  it("starts the other workers when one cannot be, then names the missing share", async () => {
    const started: number[] = [];
    const errors: unknown[] = [];
    const metrics = new MetricTotals();
    const failing = dispatchTick(
      {
        invoke: async (share) => {
          if (share.index === 1) throw new Error("Rate exceeded");
          started.push(share.index);
        },
      },
      3,
      { metrics, logger: { ...quiet, error: (_m, attributes) => void errors.push(attributes) } },
    );
    await expect(failing).rejects.toThrow(DispatchError);
    await expect(failing).rejects.toThrow(
      "1 worker(s) not started (shares 1/3): their channels stay due for the next tick",
    );
    expect(started).toEqual([0, 2]);
    expect(errors).toEqual([
      { share: { index: 1, of: 3 }, error: "Rate exceeded", errorName: "Error" },
    ]);
    expect([metrics.get("WorkersInvoked"), metrics.get("WorkerInvokeErrors")]).toEqual([2, 1]);
  });
});

describe("a share's claim", () => {
  const settings = {
    maxSize: 50,
    settle: 30 * MINUTE,
    minItems: 1,
    grace: 0,
    maxArrivalsPerChannel: 100,
    leaseMs: MINUTE,
    channelConcurrency: 2,
    holdTimeoutMs: MINUTE,
  };
  const setup = async () => {
    const clock = { now: T0 + 2 * 30 * MINUTE, wall: T0 };
    const channels = new MemoryChannelStore(() => clock.now, 2);
    const store = new MemoryStore({ positions: channels });
    const metrics = new MetricTotals();
    const sent: string[] = [];
    const deps: TickDependencies = {
      messages: store,
      channels,
      sink: { send: async (entries) => void sent.push(...entries.map((e) => e.segment.channel)) },
      bodies: { maxBodyBytes: 256 * 1024, tableName: "messages" },
      metrics,
      logger: quiet,
      settings,
      now: () => clock.now,
      wallNow: () => clock.wall,
    };
    // One channel in each of the two shards.
    const names = Array.from({ length: 20 }, (_, i) => `c${i}`);
    const byShard = ["0", "1"].map((shard) => names.find((c) => dueShardOf(c, 2) === shard));
    await ingest(
      store,
      (byShard as string[]).map((channel) => ({ id: `${channel}-1`, ts: T0, channel, text: "hi" })),
    );
    return { clock, channels, deps, metrics, sent, byShard: byShard as string[] };
  };
  const share = { index: 0, of: 2 };

  it("keeps a second worker of a share off it while the first runs, and off the other share", async () => {
    const { clock, channels, deps, metrics, sent, byShard } = await setup();
    expect(await channels.claimShare(share, "earlier", clock.wall + MINUTE, clock.wall)).toBe(true);
    const run = await runShare(deps, share, { until: clock.wall + MINUTE });
    expect(run).toEqual({ share, busy: true, tick: null });
    expect(metrics.get("SharesBusy")).toBe(1);
    expect(sent).toEqual([]);
    // The other share is not held up.
    const other = await runShare(deps, { index: 1, of: 2 }, { until: clock.wall + MINUTE });
    expect(other.tick?.channels).toBe(1);
    expect(sent).toEqual([byShard[1]]);
  });

  it("lets a worker take a share whose claim ran out (its worker died)", async () => {
    const { clock, channels, deps, sent, byShard } = await setup();
    await channels.claimShare(share, "dead", clock.wall + MINUTE, clock.wall);
    clock.wall += MINUTE;
    const run = await runShare(deps, share, { until: clock.wall + MINUTE });
    expect(run.busy).toBe(false);
    expect(sent).toEqual([byShard[0]]);
  });

  it("is released when the worker ends, even by an error", async () => {
    const { clock, channels, deps } = await setup();
    await runShare(deps, share, { until: clock.wall + MINUTE });
    expect(await channels.claimShare(share, "next", clock.wall + MINUTE, clock.wall)).toBe(true);
    await channels.releaseShare(share, "next");
    const broken: TickDependencies = {
      ...deps,
      channels: Object.assign(Object.create(channels), {
        dueChannels: () => {
          throw new Error("Query failed");
        },
      }),
    };
    await expect(runShare(broken, share, { until: clock.wall + MINUTE })).rejects.toThrow(
      "Query failed",
    );
    expect(await channels.claimShare(share, "after", clock.wall + MINUTE, clock.wall)).toBe(true);
    // Only its owner ends a claim.
    await channels.releaseShare(share, "someone else");
    expect(await channels.claimShare(share, "again", clock.wall + MINUTE, clock.wall)).toBe(false);
  });
});
