/**
 * The tick's budget: it starts exactly the channels its budget lets start, longest waiting
 * first, and leaves the rest due; the deployed budget is the invocation's deadline.
 */

import { MemoryStore } from "convoseg/history";
import { ingest } from "convoseg/ingest";
import {
  deadlineBudget,
  runTick,
  type SegmentDelivery,
  type TickBudget,
  type TickDependencies,
} from "convoseg/pipeline";
import { MemoryChannelStore } from "convoseg/pipeline/store";
import { describe, expect, it } from "vitest";
import { MetricTotals } from "../../../local/pipeline.js";
import { channelBudget } from "../../support/tick-budget.js";

const MINUTE = 60_000;
const T0 = Date.UTC(2025, 0, 6);

/** Five channels, marked due a minute apart (`c0` first), and a tick an hour later. */
async function fiveDueChannels() {
  const clock = { now: T0 };
  const channels = new MemoryChannelStore(() => clock.now);
  const store = new MemoryStore({ positions: channels });
  for (let i = 0; i < 5; i++) {
    await ingest(store, [{ id: `m${i}`, ts: clock.now, channel: `c${i}`, text: "x" }]);
    clock.now += MINUTE;
  }
  clock.now += 60 * MINUTE;
  const metrics = new MetricTotals();
  const sent: SegmentDelivery[] = [];
  const deps: TickDependencies = {
    messages: store,
    channels,
    sink: { send: async (entries) => void sent.push(...entries) },
    bodies: { maxBodyBytes: 256 * 1024, tableName: "messages" },
    metrics,
    logger: { info() {}, warn() {}, error() {} },
    settings: {
      maxSize: 5,
      settle: MINUTE,
      minItems: 1,
      grace: 0,
      maxArrivalsPerChannel: 100,
      leaseMs: MINUTE,
      channelConcurrency: 2,
      holdTimeoutMs: 5 * MINUTE,
    },
    now: () => clock.now,
    wallNow: () => clock.now,
  };
  const delivered = () => sent.map((entry) => entry.segment.channel);
  return { deps, channels, metrics, delivered };
}

describe("the tick's budget", () => {
  it("starts as many channels as the budget lets, the longest waiting first; the rest wait", async () => {
    const { deps, metrics, delivered } = await fiveDueChannels();
    const first = await runTick(deps, channelBudget(2));
    expect(first).toMatchObject({ channels: 2, stoppedEarly: true });
    expect(delivered().sort()).toEqual(["c0", "c1"]);
    expect(metrics.get("TicksStoppedEarly")).toBe(1);
    const second = await runTick(deps);
    expect(second).toMatchObject({ channels: 3, stoppedEarly: false });
    expect(delivered().sort()).toEqual(["c0", "c1", "c2", "c3", "c4"]);
    expect(metrics.get("TicksStoppedEarly")).toBe(1);
  });

  it("a budget of every due channel does not stop the tick early", async () => {
    const { deps, metrics } = await fiveDueChannels();
    expect(await runTick(deps, channelBudget(5))).toMatchObject({
      channels: 5,
      stoppedEarly: false,
    });
    expect(metrics.get("TicksStoppedEarly")).toBe(0);
  });

  it("a budget spent before the tick begins reads nothing", async () => {
    const { deps, channels, metrics } = await fiveDueChannels();
    let read = false;
    const watched: TickDependencies = {
      ...deps,
      channels: Object.assign(Object.create(channels) as MemoryChannelStore, {
        dueChannels: (now: number) => {
          read = true;
          return channels.dueChannels(now);
        },
      }),
    };
    const spent: TickBudget = { spent: () => true, startChannel: () => true };
    expect(await runTick(watched, spent)).toMatchObject({ channels: 0, stoppedEarly: true });
    expect(read).toBe(false);
    expect(metrics.totals.has("OldestDueAgeMs")).toBe(false);
  });

  it("the deadline budget starts nothing at or after its deadline", () => {
    let now = 1_000;
    const budget = deadlineBudget(2_000, () => now);
    expect([budget.spent(), budget.startChannel()]).toEqual([false, true]);
    now = 2_000;
    expect([budget.spent(), budget.startChannel()]).toEqual([true, false]);
  });
});
