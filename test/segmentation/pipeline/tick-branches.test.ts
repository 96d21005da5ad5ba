/**
 * The tick's branches on the in-memory channel store and history store: leases and takeovers,
 * caps, conflicts, the state size bound, writers' holds (late commits, broken holds), cleared
 * channels and due times. Fast and deterministic: both clocks are the test's.
 */
import { randomBytes } from "node:crypto";
import { MemoryStore } from "convoseg/history";
import type { PositionAllocator, PositionLease } from "convoseg/history/positions";
import { ingest } from "convoseg/ingest";
import {
  type PlannedSegment,
  runTick,
  type SegmentDelivery,
  type TickDependencies,
  type TickSettings,
} from "convoseg/pipeline";
import { parseSegmentBody } from "convoseg/pipeline/contract";
import { type ChannelStore, encodeTickState, MemoryChannelStore } from "convoseg/pipeline/store";
import { describe, expect, it } from "vitest";
import { TARGET_STATE_BYTES } from "../../../lib/segmentation/pipeline/channel-plan.js";
import { processChannel } from "../../../lib/segmentation/pipeline/channel-step.js";
import { MetricTotals } from "../../../local/pipeline.js";
import { SMALL_CHAT_TICK } from "../../support/quiet-tick.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.UTC(2025, 0, 6);

interface Harness {
  deps: TickDependencies;
  channels: MemoryChannelStore;
  store: MemoryStore;
  metrics: MetricTotals;
  sent: SegmentDelivery[];
  warnings: string[];
  clock: { now: number; wall: number };
  /** Makes the sink fail (true) or work again. */
  failSends(fail: boolean): void;
  ingest(inputs: unknown[]): ReturnType<typeof ingest>;
  tick(): ReturnType<typeof runTick>;
}

function settings(overrides: Partial<TickSettings> = {}): TickSettings {
  return { ...SMALL_CHAT_TICK, maxSize: 5, ...overrides };
}

function harness(
  overrides: Partial<TickSettings> = {},
  positions?: PositionAllocator,
  maxBodyBytes = 256 * 1024,
): Harness {
  const clock = { now: T0, wall: T0 };
  const channels = new MemoryChannelStore(() => clock.now);
  const store = new MemoryStore({ positions: positions ?? channels });
  const metrics = new MetricTotals();
  const sent: SegmentDelivery[] = [];
  const warnings: string[] = [];
  let failing = false;
  const deps: TickDependencies = {
    messages: store,
    channels,
    sink: {
      async send(entries) {
        if (failing)
          throw Object.assign(new Error("queue does not exist"), { name: "QueueDoesNotExist" });
        sent.push(...entries);
      },
    },
    bodies: { maxBodyBytes, tableName: "messages" },
    metrics,
    logger: { info() {}, warn: (message) => warnings.push(message), error() {} },
    settings: settings(overrides),
    now: () => clock.now,
    wallNow: () => clock.wall,
  };
  return {
    deps,
    channels,
    store,
    metrics,
    sent,
    warnings,
    clock,
    failSends: (fail) => {
      failing = fail;
    },
    ingest: (inputs) => ingest(store, inputs),
    tick: () => runTick(deps),
  };
}

/** Chat in one channel: `count` messages a minute apart from `start`. */
const chat = (channel: string, count: number, start = T0, prefix = "m") =>
  Array.from({ length: count }, (_, i) => ({
    id: `${prefix}${String(i).padStart(4, "0")}`,
    ts: start + i * MINUTE,
    channel,
    text: `${prefix} ${i}`,
  }));

const ids = (segments: PlannedSegment[] | SegmentDelivery[]) =>
  segments.flatMap((s) => ("segment" in s ? s.segment : s).messages.map((m) => m.id));

/** Moves both clocks on. */
function advance(h: Harness, ms: number): void {
  h.clock.now += ms;
  h.clock.wall += ms;
}

/** Ticks every `step` until nothing is due any more (or `limit` ticks). */
async function settleAll(h: Harness, step = 10 * MINUTE, limit = 500): Promise<void> {
  for (let i = 0; i < limit && (await h.channels.earliestDue()) !== null; i++) {
    advance(h, step);
    await h.tick();
  }
}

describe("tick on the in-memory stores", () => {
  it("delivers settled segments once and takes the channel off the due index", async () => {
    const h = harness();
    await h.ingest(chat("c", 12));
    await settleAll(h);
    expect(ids(h.sent)).toEqual(chat("c", 12).map((m) => m.id));
    expect(await h.channels.earliestDue()).toBeNull();
  });

  /** Message 1 of the Slack cases below, as a segment body carries it. */
  const ANA_ASKS = {
    id: "1",
    ts: T0,
    author: "ana",
    text: "how?",
    userId: "U1",
    platform: "slack",
    channelName: "general",
  };

  it("delivers the platform fields of ingested messages in the segment body (read by id at delivery)", async () => {
    const h = harness();
    const where = { channel: "C1", platform: "slack", channelName: "general" };
    await h.ingest([
      { id: "1", ts: T0, user: "ana", userId: "U1", text: "how?", ...where },
      { id: "2", ts: T0 + MINUTE, user: "bo", text: "so", replyTo: "1", ...where },
    ]);
    await settleAll(h);
    const body = parseSegmentBody(h.sent[0].body);
    expect(body.thread).toBeUndefined();
    expect(body.messages).toEqual([
      ANA_ASKS,
      {
        id: "2",
        ts: T0 + MINUTE,
        author: "bo",
        text: "so",
        replyTo: "1",
        platform: "slack",
        channelName: "general",
      },
    ]);
  });

  it("segments a thread's replies as a stream of their own, with the root as context only", async () => {
    const h = harness();
    const where = { channel: "C1", platform: "slack", channelName: "general" };
    await h.ingest([
      { id: "1", ts: T0, user: "ana", userId: "U1", text: "how?", ...where },
      { id: "2", ts: T0 + MINUTE, user: "bo", text: "so", replyTo: "1", thread: "1", ...where },
      { id: "3", ts: T0 + 2 * MINUTE, user: "cy", text: "meanwhile", ...where },
      { id: "4", ts: T0 + 3 * MINUTE, user: "ana", text: "thanks", thread: "1", ...where },
    ]);
    await settleAll(h);
    const bodies = h.sent.map((s) => parseSegmentBody(s.body));
    expect(bodies.map((b) => [b.thread ?? null, b.messageIds])).toEqual([
      [null, ["1", "3"]],
      ["1", ["2", "4"]],
    ]);
    expect(bodies[1].threadRoot).toEqual(ANA_ASKS);
    expect(bodies[0].threadRoot).toBeUndefined();
    expect(bodies[1].messages?.map((m) => m.thread)).toEqual(["1", "1"]);
    expect(bodies[1].channel).toBe("C1");
  });

  it("delivers a thread reply that arrives after its thread's segment went out late, after that segment", async () => {
    const h = harness();
    await h.ingest([
      { id: "1", ts: T0, text: "how?", channel: "C1" },
      { id: "2", ts: T0 + MINUTE, text: "so", thread: "1", channel: "C1" },
      { id: "4", ts: T0 + 3 * MINUTE, text: "and", thread: "1", channel: "C1" },
    ]);
    await settleAll(h);
    const emitted = h.sent.map((s) => parseSegmentBody(s.body));
    const thread = emitted.find((b) => b.thread === "1");
    expect(thread?.messageIds).toEqual(["2", "4"]);
    await h.ingest([{ id: "3", ts: T0 + 2 * MINUTE, text: "late", thread: "1", channel: "C1" }]);
    await settleAll(h);
    const late = parseSegmentBody(h.sent[emitted.length].body);
    expect(late).toMatchObject({
      thread: "1",
      late: true,
      belongsAfter: thread?.segmentId,
      messageIds: ["3"],
    });
    expect(late.threadRoot?.id).toBe("1");
    expect(h.sent).toHaveLength(emitted.length + 1);
  });

  it("leaves a leased outbox alone, then takes it over with the same segments and state", async () => {
    const h = harness();
    await h.ingest(chat("c", 7));
    advance(h, 2 * HOUR);
    h.failSends(true);
    await h.tick();
    const recorded = await h.channels.load("c");
    expect(recorded.record.state.outbox.segments).toHaveLength(2);
    // Within the lease another tick does nothing.
    expect(await processChannel(h.deps, "c")).toMatchObject({ outcome: "leased" });
    // Past it, the same segments go out again (here the queue is back).
    h.failSends(false);
    advance(h, MINUTE + 1);
    const report = await processChannel(h.deps, "c");
    expect(report.outcome).toBe("done");
    expect(report.delivered.map((s) => s.segmentId)).toEqual(
      recorded.record.state.outbox.segments.map((s) => s.segmentId),
    );
    expect(ids(h.sent)).toEqual(chat("c", 7).map((m) => m.id));
  });

  it("keeps the state the same size while delivery fails for good, alarms, and recovers", async () => {
    const h = harness();
    await h.ingest(chat("c", 20));
    advance(h, 2 * HOUR);
    h.failSends(true);
    await h.tick();
    const first = await h.channels.load("c");
    const dueAt = first.marks.dueAt;
    for (let lease = 0; lease < 30; lease++) {
      // Messages keep arriving: none may be read while the outbox is undelivered.
      await h.ingest(chat("c", 3, T0 + 10 * HOUR + lease * HOUR, `late${lease}-`));
      advance(h, MINUTE + 1);
      await h.tick();
      const now = await h.channels.load("c");
      expect(now.stateBytes).toBe(first.stateBytes);
      expect(now.record.state.outbox).toEqual(first.record.state.outbox);
      // A failing channel keeps its earliest due time: it ages, and the age alarm fires.
      expect(now.marks.dueAt).toBe(dueAt);
    }
    expect(h.metrics.get("ChannelErrors")).toBe(31);
    h.failSends(false);
    await settleAll(h);
    const delivered = ids(h.sent);
    expect(new Set(delivered).size).toBe(delivered.length);
    expect(delivered).toHaveLength(20 + 30 * 3);
  });

  it("records nothing when another tick recorded first", async () => {
    const h = harness();
    await h.ingest(chat("c", 7));
    advance(h, 2 * HOUR);
    const stale = await h.channels.load("c");
    await h.tick();
    const racing: ChannelStore = Object.create(h.channels, {
      load: { value: async () => stale },
    });
    const report = await processChannel({ ...h.deps, channels: racing }, "c");
    expect(report.outcome).toBe("conflict");
    expect(ids(h.sent)).toEqual(chat("c", 7).map((m) => m.id));
  });

  it("reads at most the cap per tick, stays due, and reads the rest next", async () => {
    const h = harness({ maxArrivalsPerChannel: 4, maxSize: 100 });
    await h.ingest(chat("c", 10));
    advance(h, 2 * HOUR);
    await h.tick();
    const after = await h.channels.load("c");
    // Planned as still open, as more of the conversation waits unread: nothing is cut early.
    expect(after.record.state.planner.tail).toHaveLength(4);
    expect(after.marks.dueAt).toBeLessThanOrEqual(h.clock.now);
    await settleAll(h);
    expect(ids(h.sent)).toEqual(chat("c", 10).map((m) => m.id));
    expect(h.sent).toHaveLength(1);
  });

  it("reads fewer arrivals rather than record a state over its bound, and loses nothing", async () => {
    const h = harness({ maxSize: 5000, settle: 30 * 24 * HOUR }, undefined, 1024 * 1024);
    // Ids of 1000 random characters: a thousand of them do not compress under the bound.
    const longId = (i: number) =>
      `${String(i).padStart(5, "0")}${randomBytes(750).toString("base64")}`;
    const messages = Array.from({ length: 1500 }, (_, i) => ({
      id: longId(i),
      ts: T0 + i * 1000,
      channel: "c",
    }));
    // Two ticks' worth of arrivals (the byte cap takes about a thousand such ids a tick).
    const tail = messages.slice(0, 2000).map(({ id, ts }) => ({ id, ts }));
    const unbounded = encodeTickState({
      ...(await h.channels.load("c")).record.state,
      planner: { tail, watermark: null, recent: [] },
    });
    expect(unbounded.byteLength).toBeGreaterThan(TARGET_STATE_BYTES);
    await h.ingest(messages);
    let before = await h.channels.load("c");
    for (let i = 0; i < 8; i++) {
      advance(h, i < 4 ? MINUTE : 31 * 24 * HOUR);
      await h.tick();
      const after = await h.channels.load("c");
      // A state past the bound is only recorded when it read nothing more.
      if (after.stateBytes > TARGET_STATE_BYTES) {
        expect(after.record.state.readUpTo).toBe(before.record.state.readUpTo);
      }
      before = after;
    }
    expect(h.metrics.get("ChannelErrors")).toBe(0);
    // Once the open conversation settles it is delivered, and the rest is read: each message
    // once (the conversation is cut where the state could hold no more).
    await settleAll(h, 31 * 24 * HOUR);
    expect(ids(h.sent)).toEqual(messages.map((m) => m.id));
  });

  it("delivers what a cleared channel had decided without the messages that are gone", async () => {
    const h = harness();
    await h.ingest(chat("c", 7));
    advance(h, 2 * HOUR);
    h.failSends(true);
    await h.tick();
    await h.store.clear("c");
    h.failSends(false);
    advance(h, MINUTE + 1);
    await h.tick();
    expect(h.sent).toEqual([]);
    expect(h.metrics.get("MissingMessages")).toBe(7);
    // Only the first, failed delivery was an error: nothing fails forever.
    expect(h.metrics.get("ChannelErrors")).toBe(1);
    // The channel goes on: new messages after the clear are read and delivered.
    await h.ingest(chat("c", 2, T0 + 5 * HOUR, "new"));
    await settleAll(h);
    expect(ids(h.sent)).toEqual(["new0000", "new0001"]);
  });

  it("keeps the earlier due time when a channel is marked again", async () => {
    const h = harness();
    await h.ingest(chat("c", 1));
    const first = (await h.channels.load("c")).marks.dueAt;
    advance(h, 10 * MINUTE);
    await h.ingest(chat("c", 1, T0 + MINUTE, "again"));
    expect((await h.channels.load("c")).marks.dueAt).toBe(first);
  });
});

/**
 * An allocator whose next write, once `hold()` is called, reserves its positions and then waits
 * (holding them) until the test opens the gate: a writer whose puts land late.
 */
function gatedWriters(channels: MemoryChannelStore) {
  const waiting: { reserved: () => void; opened: Promise<void> }[] = [];
  const allocator: PositionAllocator = {
    async reserve(channel, count): Promise<PositionLease> {
      const lease = await channels.reserve(channel, count);
      const gate = waiting.shift();
      if (gate) {
        gate.reserved();
        await gate.opened;
      }
      return lease;
    },
  };
  const hold = () => {
    let reserved = () => {};
    let open = () => {};
    const gate = {
      reserved: new Promise<void>((resolve) => {
        reserved = resolve;
      }),
      open: () => open(),
    };
    waiting.push({
      reserved: () => reserved(),
      opened: new Promise<void>((resolve) => {
        open = resolve;
      }),
    });
    return gate;
  };
  return { allocator, hold };
}

describe("writers' holds", () => {
  it("never reads past a position a writer still holds: a late commit is read, nothing lost", async () => {
    const h = harness({ maxSize: 100 });
    const { allocator, hold } = gatedWriters(h.channels);
    const writer = new MemoryStore({ positions: allocator });
    h.deps.messages = writer;
    const gate = hold();
    const slowWrite = ingest(writer, chat("c", 3, T0, "slow"));
    await gate.reserved;
    // A second writer reserves after the slow one and commits at once, at higher positions.
    await ingest(writer, chat("c", 3, T0 + 3 * MINUTE, "fast"));
    advance(h, 2 * HOUR);
    await h.tick();
    // Nothing is read past the held positions: not even the fast writer's later ones.
    expect((await h.channels.load("c")).record.state.readUpTo).toBeNull();
    expect(h.sent).toEqual([]);
    gate.open();
    await slowWrite;
    await settleAll(h);
    expect(ids(h.sent).sort()).toEqual(
      [...chat("c", 3, T0, "slow"), ...chat("c", 3, T0, "fast")].map((m) => m.id).sort(),
    );
  });

  it("breaks a hold whose writer hangs, and takes what it writes later as late arrivals", async () => {
    const h = harness({ maxSize: 100 });
    const { allocator, hold } = gatedWriters(h.channels);
    const writer = new MemoryStore({ positions: allocator });
    h.deps.messages = writer;
    await ingest(writer, chat("c", 4));
    const gate = hold();
    const hung = ingest(writer, chat("c", 2, T0 + 4 * MINUTE, "hung"));
    await gate.reserved;
    advance(h, 2 * HOUR);
    await h.tick();
    // What was written before the hold is read and, settled, delivered.
    expect(ids(h.sent)).toEqual(chat("c", 4).map((m) => m.id));
    // Past the hold timeout (measured from when a tick first saw the hold) it is broken.
    advance(h, 5 * MINUTE);
    await h.tick();
    expect(h.metrics.get("HoldsBroken")).toBe(1);
    expect((await h.channels.load("c")).marks.holds).toEqual([]);
    // Others write on, and the tick reads past the broken hold's positions.
    await ingest(writer, chat("c", 1, T0 + 3 * HOUR, "later"));
    advance(h, 2 * HOUR);
    await h.tick();
    expect(ids(h.sent)).toEqual([...chat("c", 4), ...chat("c", 1, 0, "later")].map((m) => m.id));
    // The writer wakes up and writes where it held: behind the read position.
    gate.open();
    await hung;
    // The positions of a broken hold are watched for a day (and the channel kept due meanwhile).
    advance(h, 10 * MINUTE);
    await h.tick();
    expect(h.metrics.get("ArrivalsBehindReadPosition")).toBe(2);
    const late = h.sent.slice(-1)[0];
    expect(late.segment).toMatchObject({ late: true });
    expect(ids([late])).toEqual(["hung0000", "hung0001"]);
    expect(h.warnings).toContain(
      "arrivals found behind the read position (a broken hold's writer came back)",
    );
    // After the watch, the channel is let go.
    await settleAll(h, HOUR);
    expect(await h.channels.earliestDue()).toBeNull();
    expect((await h.channels.load("c")).record.state.broken).toEqual([]);
  });
});
