/**
 * A channel's streams (issue 24 §1, `lib/segmentation/pipeline/streams.ts`): a thread's replies are planned as
 * a stream of their own with the planner's rules, the root stays in the channel's; a reply that
 * arrives after its thread's segment was emitted follows the late policy; idle threads are
 * forgotten past a bound without breaking it; size cuts read known replies; every message is in exactly one segment whatever
 * the ticks (property); a linked conversation merged into another hands it its open tail, and
 * still every message is in exactly one segment (property).
 */

import { type ConversationMerge, settleMerges } from "convoseg/linker";
import { decodeTickState, encodeTickState } from "convoseg/pipeline/store";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EMPTY_TICK_STATE } from "../../../lib/segmentation/pipeline/store/channel-state.js";
import {
  MAX_IDLE_THREADS,
  planStreams,
  type StreamRef,
  type StreamStates,
} from "../../../lib/segmentation/pipeline/streams.js";
import {
  EMPTY_PLANNER_STATE,
  type PipelineConfig,
} from "../../../lib/segmentation/pipeline/types.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.UTC(2025, 0, 6);
const CONFIG: PipelineConfig = { maxSize: 3, settle: HOUR, minItems: 1, grace: 0 };
const EMPTY: StreamStates = { planner: EMPTY_PLANNER_STATE, threads: [], threadFloor: null };

const at = (minutes: number) => T0 + minutes * MINUTE;
const msg = (id: string, minutes: number, thread?: string): StreamRef => ({
  id,
  ts: at(minutes),
  ...(thread === undefined ? {} : { thread }),
});
const view = (plan: ReturnType<typeof planStreams>) =>
  plan.segments.map((s) => [s.thread ?? null, s.late, s.messages.map((m) => m.id)]);

describe("planStreams", () => {
  it("segments a thread's replies apart from the channel, the root in the channel's stream", () => {
    const arrivals = [
      msg("r", 0),
      msg("t1", 1, "r"),
      msg("c1", 2),
      // A root that names its own thread (Slack's thread_ts) stays in the channel's stream.
      msg("s", 3, "s"),
      msg("t2", 4, "r"),
      msg("u1", 5, "s"),
    ];
    const plan = planStreams("c", EMPTY, arrivals, at(200), CONFIG);
    expect(view(plan)).toEqual([
      [null, false, ["r", "c1", "s"]],
      ["r", false, ["t1", "t2"]],
      ["s", false, ["u1"]],
    ]);
    expect(plan.segments.every((s) => s.channel === "c")).toBe(true);
    expect(plan.nextDueAt).toBeNull();
  });

  it("keeps a thread open on its own settle time while the channel goes on", () => {
    const first = planStreams("c", EMPTY, [msg("r", 0), msg("t1", 30, "r")], at(70), CONFIG);
    // The channel's root settled (quiet past an hour); the thread's reply has not.
    expect(view(first)).toEqual([[null, false, ["r"]]]);
    expect(first.threads.map((t) => [t.root, t.planner.tail.map((m) => m.id)])).toEqual([
      ["r", ["t1"]],
    ]);
    expect(first.nextDueAt).toBe(at(30) + HOUR + 1);
    const second = planStreams("c", first, [msg("t2", 80, "r")], at(130), CONFIG);
    expect(view(second)).toEqual([]);
    const third = planStreams("c", second, [], at(200), CONFIG);
    expect(view(third)).toEqual([["r", false, ["t1", "t2"]]]);
  });

  it("delivers a reply that arrives after its thread's segment was emitted late, after that segment", () => {
    const emitted = planStreams(
      "c",
      EMPTY,
      [msg("r", 0), msg("t1", 1, "r"), msg("t3", 10, "r")],
      at(100),
      CONFIG,
    );
    const threadSegment = emitted.segments.find((s) => s.thread === "r");
    expect(threadSegment?.messages.map((m) => m.id)).toEqual(["t1", "t3"]);
    // t2 was written at minute 5 but arrives now: at or before the thread's watermark.
    const late = planStreams("c", emitted, [msg("t2", 5, "r"), msg("c9", 101)], at(300), CONFIG);
    expect(view(late)).toEqual([
      ["r", true, ["t2"]],
      [null, false, ["c9"]],
    ]);
    expect(late.segments[0].belongsAfter).toBe(threadSegment?.segmentId);
    expect(late.late.map((m) => m.id)).toEqual(["t2"]);
    // A reply after the watermark opens the thread's next segment, on time.
    const next = planStreams("c", late, [msg("t4", 400, "r")], at(500), CONFIG);
    expect(view(next)).toEqual([["r", false, ["t4"]]]);
  });

  it("cuts a long conversation where it severs the fewest known replies, as the segmenter does", () => {
    const conversation = [msg("m0", 0), msg("m1", 1), msg("m2", 11), msg("m3", 12), msg("m4", 13)];
    const config = { ...CONFIG, maxSize: 4 };
    const plain = planStreams("c", EMPTY, conversation, at(200), config);
    expect(view(plain).map(([, , ids]) => ids)).toEqual([
      ["m0", "m1"],
      ["m2", "m3", "m4"],
    ]);
    const linked = conversation.map((m) => (m.id === "m2" ? { ...m, replyTo: "m1" } : m));
    const cut = planStreams("c", EMPTY, linked, at(200), config);
    expect(view(cut).map(([, , ids]) => ids)).toEqual([["m0", "m1", "m2", "m3"], ["m4"]]);
    // Segments carry refs only; the link lives in the open tail while it may still cut.
    expect(cut.segments[0].messages[2]).toEqual({ id: "m2", ts: at(11) });
    const open = planStreams("c", EMPTY, linked.slice(0, 3), at(12), config);
    expect(open.planner.tail.find((m) => m.id === "m2")?.replyTo).toBe("m1");
  });

  it("ignores an arrival already in any stream's tail (an overlapping read)", () => {
    const open = planStreams("c", EMPTY, [msg("r", 0), msg("t1", 1, "r")], at(2), CONFIG);
    const again = planStreams("c", open, [msg("t1", 1, "r"), msg("r", 0)], at(200), CONFIG);
    expect(view(again)).toEqual([
      [null, false, ["r"]],
      ["r", false, ["t1"]],
    ]);
  });

  it("forgets the idle threads with the oldest watermarks past the bound; their late replies stay late", () => {
    const count = MAX_IDLE_THREADS + 3;
    const arrivals = Array.from({ length: count }, (_, i) => msg(`t${i}`, i, `root${i}`));
    const plan = planStreams("c", EMPTY, arrivals, at(count + 200), CONFIG);
    expect(plan.segments).toHaveLength(count);
    expect(plan.threads).toHaveLength(MAX_IDLE_THREADS);
    expect(plan.threads.some((t) => t.root === "root0")).toBe(false);
    expect(plan.threadFloor).toEqual(msg("t2", 2));
    // A reply of a forgotten thread written before the floor is late (place unknown).
    const late = planStreams("c", plan, [msg("x", 1, "root0")], at(count + 300), CONFIG);
    expect(view(late)).toEqual([["root0", true, ["x"]]]);
    expect(late.segments[0].belongsAfter).toBeNull();
  });

  it("stores threads in the tick state, and a state without them encodes as before", () => {
    const plan = planStreams("c", EMPTY, [msg("r", 0), msg("t1", 1, "r")], at(2), CONFIG);
    const state = { ...EMPTY_TICK_STATE, planner: plan.planner, threads: [...plan.threads] };
    expect(decodeTickState("c", encodeTickState(state)).threads).toEqual(plan.threads);
    const none = { ...EMPTY_TICK_STATE, threads: [] };
    expect(encodeTickState(none)).toEqual(encodeTickState(EMPTY_TICK_STATE));
    expect(decodeTickState("c", encodeTickState(EMPTY_TICK_STATE)).threads).toBeUndefined();
  });

  it("puts every message in exactly one segment, whatever the ticks (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ gap: fc.integer({ min: 0, max: 90 }), root: fc.option(fc.nat(5)) }), {
          minLength: 1,
          maxLength: 40,
        }),
        fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 1, max: 4 }),
        (steps, ticks, maxSize) => {
          let minutes = 0;
          const chat = steps.map(({ gap, root }, i) => {
            minutes += gap;
            return msg(`m${i}`, minutes, root === null ? undefined : `root${root}`);
          });
          let state = EMPTY;
          let clock = 0;
          let read = 0;
          const seen: string[] = [];
          for (const step of [...ticks, 10_000]) {
            clock += step;
            const arrived: StreamRef[] = [];
            while (read < chat.length && chat[read].ts <= at(clock)) arrived.push(chat[read++]);
            const plan = planStreams("c", state, arrived, at(clock), { ...CONFIG, maxSize });
            for (const segment of plan.segments) {
              seen.push(...segment.messages.map((m) => m.id));
              for (const m of segment.messages) {
                const thread = chat.find((c) => c.id === m.id)?.thread;
                expect(segment.thread).toBe(thread);
              }
            }
            state = plan;
          }
          expect(seen.sort()).toEqual(chat.map((m) => m.id).sort());
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("planStreams with merged conversations", () => {
  const linked = (id: string, minutes: number, conversation: string): StreamRef => ({
    ...msg(id, minutes),
    conversation,
  });
  const tails = (plan: ReturnType<typeof planStreams>) =>
    plan.threads.map((t) => [t.root, t.planner.tail.map((m) => m.id)]);

  it("hands the open tail of the conversation given up to the one kept, planned there", () => {
    const first = planStreams(
      "c",
      EMPTY,
      [linked("a0", 0, "a0"), linked("b0", 1, "b0"), linked("a1", 2, "a0"), linked("b1", 3, "b0")],
      at(30),
      { ...CONFIG, maxSize: 10 },
    );
    expect(view(first)).toEqual([]);
    expect(tails(first)).toEqual([
      ["a0", ["a0", "a1"]],
      ["b0", ["b0", "b1"]],
    ]);
    // m joins both: b0's conversation is a0's from now on, and m arrives in it.
    const merged = planStreams(
      "c",
      first,
      [linked("m", 40, "a0")],
      at(50),
      { ...CONFIG, maxSize: 10 },
      [{ gone: "b0", kept: "a0" }],
    );
    expect(tails(merged)).toEqual([
      ["a0", ["a0", "b0", "a1", "b1", "m"]],
      ["b0", []],
    ]);
    const settled = planStreams("c", merged, [], at(200), { ...CONFIG, maxSize: 10 });
    expect(view(settled)).toEqual([[null, false, ["a0", "b0", "a1", "b1", "m"]]]);
    expect(settled.segments[0]?.conversation).toBe("a0");
  });

  it("delivers the tail handed over late when the kept conversation's stream went past it", () => {
    const first = planStreams(
      "c",
      EMPTY,
      [linked("a0", 0, "a0"), linked("b0", 1, "b0"), linked("a1", 2, "a0"), linked("a2", 3, "a0")],
      at(30),
      { ...CONFIG, maxSize: 1 },
    );
    // a0's stream emitted its full pieces but the last; b0's waits for more.
    expect(view(first)).toEqual([
      [null, false, ["a0"]],
      [null, false, ["a1"]],
    ]);
    const merged = planStreams(
      "c",
      first,
      [linked("m", 40, "a0")],
      at(200),
      { ...CONFIG, maxSize: 2 },
      [{ gone: "b0", kept: "a0" }],
    );
    expect(view(merged)).toEqual([
      [null, true, ["b0"]],
      [null, false, ["a2", "m"]],
    ]);
    expect(merged.late.map((m) => m.id)).toEqual(["b0"]);
  });

  it("puts every message in exactly one segment, in its conversation as merged then, whatever the ticks and merges (property)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            gap: fc.integer({ min: 0, max: 90 }),
            conversation: fc.nat(4),
            merge: fc.option(fc.tuple(fc.nat(4), fc.nat(4)), { freq: 3 }),
          }),
          { minLength: 1, maxLength: 40 },
        ),
        fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 1, max: 4 }),
        (steps, ticks, maxSize) => {
          let minutes = 0;
          const chat = steps.map(({ gap }, i) => {
            minutes += gap;
            return msg(`m${i}`, minutes);
          });
          let state = EMPTY;
          let clock = 0;
          let read = 0;
          const merges: ConversationMerge[] = [];
          const seen: string[] = [];
          for (const step of [...ticks, 10_000]) {
            clock += step;
            const arrived: StreamRef[] = [];
            const made: ConversationMerge[] = [];
            while (read < chat.length && (chat[read] as StreamRef).ts <= at(clock)) {
              const { conversation, merge } = steps[read] as (typeof steps)[number];
              // As the linker merges: two conversations that are still apart.
              const current = settleMerges([...merges, ...made]);
              if (merge !== null) {
                const [gone, kept] = merge.map((n) => current(`k${n}`));
                if (gone !== kept) made.push({ gone: gone as string, kept: kept as string });
              }
              arrived.push({ ...(chat[read++] as StreamRef), conversation: `k${conversation}` });
            }
            merges.push(...made);
            const now = settleMerges(merges);
            const refs = arrived.map((r) => ({
              ...r,
              conversation: now(r.conversation as string),
            }));
            const plan = planStreams("c", state, refs, at(clock), { ...CONFIG, maxSize }, made);
            for (const segment of plan.segments) {
              seen.push(...segment.messages.map((m) => m.id));
              if (!segment.late)
                expect(now(segment.conversation as string)).toBe(segment.conversation);
            }
            state = plan;
          }
          expect(seen.sort()).toEqual(chat.map((m) => m.id).sort());
        },
      ),
      { numRuns: 200 },
    );
  });
});
