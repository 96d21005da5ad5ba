/**
 * Exactly-once under random crash points, as a property: random multi-channel chat ingested in
 * order, ticks on a schedule, each tick's process dying right after a random call it makes to
 * the channel store, the message store or the queue (and a lost lease later), then ticks until
 * everything settled. Whatever the crashes, the distinct segments delivered are exactly those of
 * one segmenter call per channel over its final stream, none late, and a redelivered segment
 * repeats its content. The same holds for a tick fanned out to several workers draining the due
 * index at once, each dying after a random call of its own, with duplicate workers of a share
 * started meanwhile. Runs on the in-memory stores, so hundreds of runs take seconds.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../lib/history/index.js";
import { compareRefs } from "../../lib/identity/index.js";
import { ingest } from "../../lib/ingest/index.js";
import {
  runShare,
  runTick,
  type SegmentDelivery,
  type TickDependencies,
  type TickSettings,
  tickShares,
} from "../../lib/pipeline/index.js";
import { MemoryChannelStore } from "../../lib/pipeline/store/index.js";
import { ConversationSegmenter } from "../../lib/segmenter/index.js";
import { type CrashControl, crashing, InjectedCrash } from "../support/crash.js";

const MINUTE = 60_000;
const T0 = Date.UTC(2025, 0, 6);
const TICK = 15 * MINUTE;

const chatArbitrary = fc
  .array(
    fc.record({
      channel: fc.constantFrom("a", "b", "c"),
      gap: fc.oneof(
        { weight: 5, arbitrary: fc.integer({ min: 0, max: 3 }) },
        { weight: 2, arbitrary: fc.integer({ min: 10, max: 50 }) },
        { weight: 1, arbitrary: fc.integer({ min: 150, max: 400 }) },
      ),
    }),
    { minLength: 1, maxLength: 40 },
  )
  .map((steps) => {
    let ts = T0;
    return steps.map(({ channel, gap }, i) => {
      ts += gap * MINUTE;
      return { id: `m${String(i).padStart(3, "0")}`, ts, channel, text: `message ${i}` };
    });
  });

const settingsArbitrary = fc.record({
  maxSize: fc.integer({ min: 1, max: 6 }),
  minItems: fc.integer({ min: 1, max: 3 }),
});

type Chat = { id: string; ts: number; channel: string; text: string };

/** One segmenter call per channel over its final stream: the distinct segments expected. */
function reference(chat: Chat[], s: TickSettings): Map<string, string[][]> {
  const segmenter = new ConversationSegmenter({
    maxSize: s.maxSize,
    settle: s.settle,
    minItems: s.minItems,
  });
  const result = new Map<string, string[][]>();
  for (const channel of new Set(chat.map((m) => m.channel))) {
    const list = chat.filter((m) => m.channel === channel).sort(compareRefs);
    result.set(
      channel,
      segmenter
        .closedSegments(list, Number.MAX_SAFE_INTEGER, (m) => m.ts)
        .map((seg) => seg.map((m) => m.id)),
    );
  }
  return result;
}

/** The settings of the crash properties, around the generated segmenter options. */
const crashSettings = (partial: { maxSize: number; minItems: number }): TickSettings => ({
  ...partial,
  settle: 2 * 60 * MINUTE,
  grace: 0,
  maxArrivalsPerChannel: 1000,
  leaseMs: MINUTE,
  channelConcurrency: 2,
  holdTimeoutMs: 5 * MINUTE,
});

/**
 * The distinct segments sent are exactly the reference's, none late, and a segment sent again
 * repeats its content. Returns how many distinct segments were sent.
 */
function expectReferenceSegments(sent: SegmentDelivery[], chat: Chat[], s: TickSettings): number {
  const byId = new Map<string, string[]>();
  const distinct = new Map<string, string[][]>();
  for (const { segment } of sent) {
    const ids = segment.messages.map((m) => m.id);
    const earlier = byId.get(segment.segmentId);
    if (earlier) {
      expect(ids).toEqual(earlier);
      continue;
    }
    expect(segment.late).toBe(false);
    byId.set(segment.segmentId, ids);
    distinct.set(segment.channel, [...(distinct.get(segment.channel) ?? []), ids]);
  }
  for (const [channel, segments] of reference(chat, s)) {
    expect(distinct.get(channel) ?? []).toEqual(segments);
  }
  return byId.size;
}

/** A tick's dependencies on the in-memory stores, every call of them counted by `control`. */
function crashingDeps(
  world: {
    store: MemoryStore;
    channels: MemoryChannelStore;
    sent: SegmentDelivery[];
    settings: TickSettings;
    clock: { now: number; wall: number };
  },
  control: CrashControl,
): TickDependencies {
  const { store, channels, sent, settings, clock } = world;
  return {
    messages: crashing(store, control),
    channels: crashing(channels, control),
    sink: crashing(
      { send: async (entries: SegmentDelivery[]) => void sent.push(...entries) },
      control,
    ),
    bodies: { maxBodyBytes: 256 * 1024, tableName: "messages" },
    metrics: { add() {} },
    logger: { info() {}, warn() {}, error() {} },
    settings,
    now: () => clock.now,
    wallNow: () => clock.wall,
  };
}

async function replayWithCrashes(chat: Chat[], s: TickSettings, crashes: number[]) {
  const clock = { now: T0, wall: T0 };
  const channels = new MemoryChannelStore(() => clock.now);
  const store = new MemoryStore({ positions: channels });
  const sent: SegmentDelivery[] = [];
  const control = { calls: 0, crashAt: 0 };
  const deps = crashingDeps({ store, channels, sent, settings: s, clock }, control);
  const sorted = [...chat].sort(compareRefs);
  const end = sorted[sorted.length - 1].ts + s.settle + 2 * TICK;
  let next = 0;
  for (let tick = 0; clock.now <= end || (await channels.earliestDue()) !== null; tick++) {
    const batch: Chat[] = [];
    while (next < sorted.length && sorted[next].ts <= clock.now) batch.push(sorted[next++]);
    if (batch.length > 0) await ingest(store, batch);
    control.calls = 0;
    control.crashAt = clock.now <= end ? (crashes[tick % crashes.length] ?? 0) : 0;
    await runTick(deps).catch((error) => {
      if (!(error instanceof InjectedCrash)) throw error;
    });
    clock.now += TICK;
    // Past any lease: a crashed tick's segments are sent again by the next one.
    clock.wall += s.leaseMs + 1;
    if (tick > 2000) throw new Error("did not settle");
  }
  return sent;
}

describe("tick under random crash points", () => {
  it("delivers exactly the segments of one big run, each with one content, none late", async () => {
    await fc.assert(
      fc.asyncProperty(
        chatArbitrary,
        settingsArbitrary,
        fc.array(fc.integer({ min: 0, max: 30 }), { minLength: 1, maxLength: 20 }),
        async (chat, partial, crashes) => {
          const s = crashSettings(partial);
          expectReferenceSegments(await replayWithCrashes(chat, s, crashes), chat, s);
        },
      ),
      { numRuns: 150 },
    );
  }, 120_000);
});

interface FanOut {
  workers: number;
  dueShards: number;
  /** Per tick, the call after which each worker dies (0: it does not). */
  crashes: number[][];
  /** Per tick, whether a second worker of share 0 starts while the first runs. */
  duplicates: boolean[];
}

/**
 * The chat replayed as in `replayWithCrashes`, but each tick fanned out: a worker per share,
 * all at once, each a process of its own that dies (makes no more calls, keeps its claim)
 * right after its chosen call.
 */
async function replayFannedOut(chat: Chat[], s: TickSettings, fan: FanOut) {
  const clock = { now: T0, wall: T0 };
  const channels = new MemoryChannelStore(() => clock.now, fan.dueShards);
  const store = new MemoryStore({ positions: channels });
  const sent: SegmentDelivery[] = [];
  const worker = (control: CrashControl) =>
    crashingDeps({ store, channels, sent, settings: s, clock }, control);
  const sorted = [...chat].sort(compareRefs);
  const end = sorted[sorted.length - 1].ts + s.settle + 2 * TICK;
  let next = 0;
  let crashed = 0;
  for (let tick = 0; clock.now <= end || (await channels.earliestDue()) !== null; tick++) {
    const batch: Chat[] = [];
    while (next < sorted.length && sorted[next].ts <= clock.now) batch.push(sorted[next++]);
    if (batch.length > 0) await ingest(store, batch);
    const crashes = clock.now <= end ? (fan.crashes[tick % fan.crashes.length] ?? []) : [];
    const starts = tickShares(fan.workers).map((share) => ({
      share,
      crashAt: crashes[share.index] ?? 0,
    }));
    if (fan.duplicates[tick % fan.duplicates.length]) starts.push({ ...starts[0], crashAt: 0 });
    await Promise.all(
      starts.map(async ({ share, crashAt }) => {
        const control: CrashControl = { calls: 0, crashAt, dies: true };
        await runShare(worker(control), share, { until: clock.wall + s.leaseMs }).catch((error) => {
          if (!(error instanceof InjectedCrash)) throw error;
        });
        if (control.dead) crashed++;
      }),
    );
    clock.now += TICK;
    // Past any lease and claim: a dead worker's share and segments are taken up again.
    clock.wall += s.leaseMs + 1;
    if (tick > 2000) throw new Error("did not settle");
  }
  return { sent, crashed };
}

const fanOutArbitrary = fc.integer({ min: 2, max: 4 }).chain((workers) =>
  fc.record({
    workers: fc.constant(workers),
    dueShards: fc.integer({ min: workers, max: 8 }),
    crashes: fc.array(fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: workers }), {
      minLength: 1,
      maxLength: 12,
    }),
    duplicates: fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
  }),
);

describe("a fanned-out tick under random crash points", () => {
  it("loses nothing and delivers a segment twice only after a worker died", async () => {
    await fc.assert(
      fc.asyncProperty(
        chatArbitrary,
        settingsArbitrary,
        fanOutArbitrary,
        async (chat, partial, fan) => {
          const s = crashSettings(partial);
          const { sent, crashed } = await replayFannedOut(chat, s, fan);
          const distinct = expectReferenceSegments(sent, chat, s);
          if (crashed === 0) expect(sent.length).toBe(distinct);
        },
      ),
      { numRuns: 150 },
    );
  }, 120_000);

  it("without crashes, delivers every segment exactly once, duplicate workers and all", async () => {
    await fc.assert(
      fc.asyncProperty(
        chatArbitrary,
        settingsArbitrary,
        fanOutArbitrary,
        async (chat, partial, fan) => {
          const s = crashSettings(partial);
          const { sent } = await replayFannedOut(chat, s, { ...fan, crashes: [[]] });
          const ids = sent.map((d) => d.segment.segmentId);
          expect(new Set(ids).size).toBe(ids.length);
          const expected = [...reference(chat, s).values()].flat();
          expect(sent.map((d) => d.segment.messages.map((m) => m.id)).sort()).toEqual(
            expected.sort(),
          );
        },
      ),
      { numRuns: 100 },
    );
  }, 120_000);
});
