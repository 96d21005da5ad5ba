/**
 * An erasure's request to reset a channel's reply linker (`ChannelStore.requestLinkerReset`), as
 * the tick takes it on the in-memory stores: the window, which holds hashes of the erased
 * person's words and names and their message ids, is dropped once, in the write that records the
 * request seen; later messages are linked from an empty window; states and marks from before
 * the request read and behave as before.
 */
import { inflateRawSync } from "node:zlib";
import { MemoryStore } from "convoseg/history";
import { ingest } from "convoseg/ingest";
import { ReplyLinker } from "convoseg/linker";
import { runTick, type TickDependencies } from "convoseg/pipeline";
import {
  type ChannelStore,
  decodeTickState,
  EMPTY_TICK_STATE,
  encodeTickState,
  MemoryChannelStore,
  type TickState,
} from "convoseg/pipeline/store";
import { describe, expect, it } from "vitest";
import { quietTick } from "../../support/quiet-tick.js";

const MINUTE = 60_000;
const T0 = Date.UTC(2025, 0, 6);

function harness(conversations: "linked" | "contiguous" = "linked") {
  const clock = { now: T0, wall: T0 };
  const channels = new MemoryChannelStore(() => clock.now);
  const store = new MemoryStore({ positions: channels });
  const deps = quietTick({
    messages: store,
    channels,
    now: () => clock.now,
    wallNow: () => clock.wall,
    settings: { conversations },
  });
  return {
    deps,
    channels,
    clock,
    ingest: (inputs: unknown[]) => ingest(store, inputs),
    tick: (with_: TickDependencies = deps) => runTick(with_),
    state: async (channel: string) => (await channels.load(channel)).record.state,
    advance(ms: number) {
      clock.now += ms;
      clock.wall += ms;
    },
  };
}

/** Chat of two people in `channel`, a minute apart from `start`, with ids `prefix…`. */
const chat = (channel: string, prefix: string, start: number, users = ["ann", "bob"]) =>
  Array.from({ length: 6 }, (_, i) => ({
    id: `${prefix}${i}`,
    ts: start + i * MINUTE,
    channel,
    user: users[i % users.length],
    text: `${users[i % users.length]} says ${prefix} word${i} about deploys`,
  }));

/** Whether a linker window holds a message id (ids are kept in clear; words as hashes). */
const holds = (linker: string | undefined, id: string) =>
  linker !== undefined && Buffer.from(linker, "base64").includes(Buffer.from(id));

describe("an erasure's linker reset, on the in-memory stores", () => {
  it("drops the window once, and later messages are linked from an empty one", async () => {
    const h = harness();
    await h.ingest(chat("c", "a", T0));
    h.advance(10 * MINUTE);
    await h.tick();
    const before = await h.state("c");
    for (const id of ["a0", "a1", "a5"]) expect(holds(before.linker, id), id).toBe(true);
    expect(before.linkerResetSeen).toBeUndefined();

    // The erasure's request: the channel is due at once, and its next tick drops the window.
    await h.channels.requestLinkerReset("c", h.clock.wall, h.clock.now);
    const requested = (await h.channels.load("c")).marks.linkerReset as number;
    expect((await h.channels.load("c")).marks.dueAt).toBe(h.clock.now);
    h.advance(MINUTE);
    await h.tick();
    const reset = await h.state("c");
    expect(reset.linker).toBe(new ReplyLinker().snapshot());
    for (const id of ["a0", "a1", "a5"]) expect(holds(reset.linker, id), id).toBe(false);
    expect(reset.linkerResetSeen).toBe(requested);
    // Only the window: what the planner holds of the channel is as it was.
    expect({ ...reset, linker: undefined, linkerResetSeen: undefined }).toEqual({
      ...before,
      linker: undefined,
      linkerResetSeen: undefined,
    });

    // Later messages fill a new window, which later ticks under the same mark keep: the state
    // is that of a channel (d) that only ever saw them.
    await h.ingest([...chat("c", "b", h.clock.now), ...chat("d", "b", h.clock.now)]);
    h.advance(10 * MINUTE);
    await h.tick();
    await h.ingest([...chat("c", "z", h.clock.now), ...chat("d", "z", h.clock.now)]);
    h.advance(10 * MINUTE);
    await h.tick();
    const later = await h.state("c");
    for (const id of ["b0", "b5", "z0", "z5"]) expect(holds(later.linker, id), id).toBe(true);
    expect(holds(later.linker, "a5")).toBe(false);
    expect(later.linkerResetSeen).toBe(requested);
    expect(later.linker).toBe((await h.state("d")).linker);
    expect((await h.state("d")).linkerResetSeen).toBeUndefined();
  });

  it("drops a window recorded by a tick that read the channel before the request", async () => {
    const h = harness();
    await h.ingest(chat("c", "a", T0));
    h.advance(10 * MINUTE);
    // The request lands between this tick's read and its finish: its state still holds the
    // window, and the channel must stay due for the next tick to drop it.
    let asked = false;
    const racing = new Proxy(h.channels, {
      get(target, property) {
        if (property === "finish") {
          return async (...args: Parameters<ChannelStore["finish"]>) => {
            if (!asked) {
              asked = true;
              await target.requestLinkerReset("c", h.clock.wall, h.clock.now);
            }
            return target.finish(...args);
          };
        }
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    await h.tick({ ...h.deps, channels: racing });
    expect(asked).toBe(true);
    expect(holds((await h.state("c")).linker, "a5")).toBe(true);
    expect(await h.channels.earliestDue()).not.toBeNull();
    h.advance(MINUTE);
    await h.tick();
    const state = await h.state("c");
    expect(holds(state.linker, "a5")).toBe(false);
    expect(state.linkerResetSeen).toBe((await h.channels.load("c")).marks.linkerReset);
  });

  it("records the request seen in contiguous mode too, with no window to drop", async () => {
    const h = harness("contiguous");
    await h.ingest(chat("c", "a", T0));
    h.advance(10 * MINUTE);
    await h.tick();
    const before = await h.state("c");
    expect(before.linker).toBeUndefined();
    await h.channels.requestLinkerReset("c", 1234, h.clock.now);
    h.advance(MINUTE);
    await h.tick();
    expect(await h.state("c")).toEqual({ ...before, linkerResetSeen: 1234 });
  });

  it("reads a state written before the reset existed as before, and keeps its window", async () => {
    const h = harness();
    await h.ingest(chat("c", "a", T0));
    h.advance(10 * MINUTE);
    await h.tick();
    const state = await h.state("c");
    // Stored as before: no new field in the wire form, none when decoded.
    // The JSON part: the linker's window follows it, after a zero byte.
    const plain = inflateRawSync(encodeTickState(state));
    const wire = JSON.parse(plain.subarray(0, plain.indexOf(0)).toString("utf8"));
    expect(Object.keys(wire)).not.toContain("linkerResetSeen");
    expect(Object.keys(decodeTickState("c", encodeTickState(state)))).not.toContain(
      "linkerResetSeen",
    );
    const seen: TickState = { ...EMPTY_TICK_STATE, linkerResetSeen: 5 };
    expect(decodeTickState("c", encodeTickState(seen))).toEqual(seen);
    // With no request on the marks, a tick links on from the window it has.
    await h.ingest(chat("c", "b", h.clock.now));
    h.advance(10 * MINUTE);
    await h.tick();
    const next = await h.state("c");
    expect(holds(next.linker, "a5")).toBe(true);
    expect(holds(next.linker, "b5")).toBe(true);
    expect(next.linkerResetSeen).toBeUndefined();
  });
});
