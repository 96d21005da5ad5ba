/**
 * The tick against a writer of the marks outside ingestion's protocol (`../support/rogue-marks.ts`),
 * for any pair of stores: a sequence set back is found and moved past what was handed out, and
 * holds renewed under new names are aged from the holds they replace and broken like stale ones.
 */

import { ingest } from "convoseg/ingest";
import {
  runTick,
  type SegmentDelivery,
  type TickDependencies,
  type TickSettings,
} from "convoseg/pipeline";
import { describe, expect, it } from "vitest";
import { MetricTotals } from "../../../local/pipeline.js";
import { SMALL_CHAT_TICK } from "../../support/quiet-tick.js";
import type { ReplayClock, StoresFactory } from "./crash-replay.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.UTC(2025, 0, 6);

const settings: TickSettings = { ...SMALL_CHAT_TICK, maxSize: 100 };

/** `count` messages of `channel` a minute apart from `start`, ids prefixed. */
const chat = (channel: string, count: number, start: number, prefix: string) =>
  Array.from({ length: count }, (_, i) => ({
    id: `${prefix}${i}`,
    ts: start + i * MINUTE,
    channel,
    text: `${prefix} ${i}`,
  }));

const idsOf = (sent: SegmentDelivery[]) => sent.flatMap((d) => d.segment.messages.map((m) => m.id));

export function describeRogueWriters(name: string, makeStores: StoresFactory): void {
  async function world() {
    const clock: ReplayClock = { now: T0, wall: T0 };
    const stores = await makeStores(clock, 4);
    const metrics = new MetricTotals();
    const sent: SegmentDelivery[] = [];
    const warnings: string[] = [];
    const deps: TickDependencies = {
      messages: stores.messages,
      channels: stores.channels,
      sink: { send: async (entries) => void sent.push(...entries) },
      bodies: { maxBodyBytes: 256 * 1024, tableName: "messages" },
      metrics,
      logger: { info() {}, warn: (message) => warnings.push(message), error() {} },
      settings,
      now: () => clock.now,
      wallNow: () => clock.wall,
    };
    const advance = (ms: number) => {
      clock.now += ms;
      clock.wall += ms;
    };
    const tick = () => runTick(deps);
    const settleAll = async () => {
      for (let i = 0; i < 100 && (await stores.channels.earliestDue()) !== null; i++) {
        advance(30 * MINUTE);
        await tick();
      }
    };
    return { ...stores, clock, metrics, sent, warnings, advance, tick, settleAll };
  }

  describe(`${name}: a writer outside ingestion's protocol`, () => {
    it("sets the sequence back: the tick moves it past what was handed out, and alarms", async () => {
      const w = await world();
      await ingest(w.messages, chat("r", 3, T0, "a"));
      w.advance(2 * HOUR);
      await w.tick();
      expect(idsOf(w.sent)).toEqual(["a0", "a1", "a2"]);
      const read = await w.channels.load("r");
      const handedOut = read.marks.seq as bigint;
      expect(read.record.state.readUpTo).toBe(handedOut);
      await w.rogue.setSeq("r", handedOut - 1_000_000_000_000n);
      // The next writer is handed positions behind the read position, and marks the channel.
      await ingest(w.messages, chat("r", 2, T0 + 3 * HOUR, "b"));
      await w.tick();
      expect(w.metrics.get("SequenceRewound")).toBe(1);
      expect(w.warnings).toContain(
        "the channel's sequence went back below positions handed out: moved past them",
      );
      expect((await w.channels.load("r")).marks.seq).toBe(handedOut);
      // From then on writers are handed positions past the read position again.
      await ingest(w.messages, chat("r", 2, T0 + 6 * HOUR, "c"));
      await w.settleAll();
      expect(idsOf(w.sent)).toEqual(expect.arrayContaining(["c0", "c1"]));
      expect(w.metrics.get("SequenceRewound")).toBe(1);
      // What was written before the tick found it is behind the read position: a reset reads it.
      expect(idsOf(w.sent)).not.toContain("b0");
      await w.channels.reset("r", w.clock.now);
      await w.settleAll();
      expect(idsOf(w.sent)).toEqual(expect.arrayContaining(["b0", "b1"]));
    });

    it("takes a sequence removed for one set back", async () => {
      const w = await world();
      // An open conversation: the channel stays due after the tick has read it.
      await ingest(w.messages, chat("gone", 2, T0, "a"));
      await w.tick();
      const handedOut = (await w.channels.load("gone")).marks.seq as bigint;
      await w.rogue.setSeq("gone", null);
      w.advance(2 * HOUR);
      await w.tick();
      expect(w.metrics.get("SequenceRewound")).toBe(1);
      expect((await w.channels.load("gone")).marks.seq).toBe(handedOut);
      expect(idsOf(w.sent)).toEqual(["a0", "a1"]);
    });

    it("keeps renewing a hold under new names: it is broken past the hold timeout all the same", async () => {
      const w = await world();
      await ingest(w.messages, chat("h", 3, T0, "a"));
      w.advance(2 * HOUR);
      await w.tick();
      const seen = (await w.channels.load("h")).marks.seq as bigint;
      await ingest(w.messages, chat("h", 3, T0 + 2 * HOUR, "b"));
      // A hold on the new messages' positions, renewed under a new name before every tick.
      let name = "h3.rogue0";
      await w.rogue.setHold("h", name, seen + 1n);
      await w.tick();
      expect((await w.channels.load("h")).record.state.readUpTo).toBe(seen);
      for (let i = 1; i <= 10; i++) {
        w.advance(2 * MINUTE);
        await w.rogue.setHold("h", name, null);
        name = `h3.rogue${i}`;
        await w.rogue.setHold("h", name, seen + 1n);
        await w.tick();
      }
      expect(w.metrics.get("HoldsRenewed")).toBeGreaterThanOrEqual(1);
      expect(w.metrics.get("HoldsBroken")).toBeGreaterThanOrEqual(1);
      expect(w.warnings).toContain(
        "holds renewed on positions handed out before: aged from the ones replaced",
      );
      // Read past while the writer still renews; a renewed hold on positions read is not
      // watched, so nothing read comes back as new (delivered twice, or counted behind).
      expect((await w.channels.load("h")).record.state.readUpTo).toBeGreaterThanOrEqual(seen + 3n);
      await w.rogue.setHold("h", name, null);
      await w.settleAll();
      expect(idsOf(w.sent)).toEqual(["a0", "a1", "a2", "b0", "b1", "b2"]);
      expect(w.metrics.get("ArrivalsBehindReadPosition")).toBe(0);
    });

    it("breaks at once a hold placed on positions already read", async () => {
      const w = await world();
      await ingest(w.messages, chat("old", 3, T0, "a"));
      w.advance(2 * HOUR);
      await w.tick();
      const read = (await w.channels.load("old")).marks.seq as bigint;
      await w.rogue.setHold("old", "h1.forged", read - 1n);
      await ingest(w.messages, chat("old", 2, T0 + 3 * HOUR, "b"));
      await w.tick();
      expect([w.metrics.get("HoldsRenewed"), w.metrics.get("HoldsBroken")]).toEqual([1, 1]);
      expect((await w.channels.load("old")).marks.holds).toEqual([]);
      await w.settleAll();
      expect(idsOf(w.sent)).toEqual(["a0", "a1", "a2", "b0", "b1"]);
    });
  });
}
