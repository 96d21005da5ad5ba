/**
 * Exactly-once under random crash points, as a property: random multi-channel chat ingested in
 * order, ticks on a schedule, each tick's process dying right after a random call it makes to
 * the channel store, the message store or the queue (and a lost lease later), then ticks until
 * everything settled. Whatever the crashes, the distinct segments delivered are exactly those of
 * one segmenter call per channel over its final stream, none late, and a redelivered segment
 * repeats its content. Runs on the in-memory stores, so hundreds of runs take seconds.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../lib/history/index.js";
import { compareRefs } from "../../lib/identity/index.js";
import { ingest } from "../../lib/ingest/index.js";
import {
  MemoryChannelStore,
  runTick,
  type SegmentDelivery,
  type TickDependencies,
  type TickSettings,
} from "../../lib/pipeline/index.js";
import { ConversationSegmenter } from "../../lib/segmenter/index.js";

const MINUTE = 60_000;
const T0 = Date.UTC(2025, 0, 6);
const TICK = 15 * MINUTE;

class InjectedCrash extends Error {
  override readonly name: string = "InjectedCrash";
}

/** Counts the calls made through `target`'s methods and throws right after the `crashAt`-th. */
function crashing<T extends object>(target: T, control: { calls: number; crashAt: number }): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const result = value.apply(object, args);
        const check = () => {
          if (++control.calls === control.crashAt)
            throw new InjectedCrash(`after call ${control.calls}`);
        };
        if (result && typeof (result as Promise<unknown>).then === "function") {
          return (result as Promise<unknown>).then((resolved) => {
            check();
            return resolved;
          });
        }
        if (
          result &&
          typeof (result as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function"
        ) {
          // An iteration counts once it is exhausted: a crash then loses what it read.
          return (async function* () {
            yield* result as AsyncIterable<unknown>;
            check();
          })();
        }
        check();
        return result;
      };
    },
  });
}

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

async function replayWithCrashes(chat: Chat[], s: TickSettings, crashes: number[]) {
  const clock = { now: T0, wall: T0 };
  const channels = new MemoryChannelStore(() => clock.now);
  const store = new MemoryStore({ positions: channels });
  const sent: SegmentDelivery[] = [];
  const control = { calls: 0, crashAt: 0 };
  const deps: TickDependencies = {
    messages: crashing(store, control),
    channels: crashing(channels, control),
    sink: crashing(
      { send: async (entries: SegmentDelivery[]) => void sent.push(...entries) },
      control,
    ),
    bodies: { maxBodyBytes: 256 * 1024, tableName: "messages" },
    metrics: { add() {} },
    logger: { info() {}, warn() {}, error() {} },
    settings: s,
    now: () => clock.now,
    wallNow: () => clock.wall,
  };
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
          const s: TickSettings = {
            ...partial,
            settle: 2 * 60 * MINUTE,
            grace: 0,
            maxArrivalsPerChannel: 1000,
            leaseMs: MINUTE,
            channelConcurrency: 2,
            holdTimeoutMs: 5 * MINUTE,
          };
          const sent = await replayWithCrashes(chat, s, crashes);
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
        },
      ),
      { numRuns: 150 },
    );
  }, 120_000);
});
