import { compareRefs, type MessageRef } from "convoseg/identity";
import { ConversationSegmenter } from "convoseg/segmenter";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { plan, RECENT_LIMIT, segmentId } from "../../../lib/segmentation/pipeline/planner.js";
import {
  EMPTY_PLANNER_STATE,
  type EmittedBound,
  type PipelineConfig,
  type PlannedSegment,
  type PlannerState,
} from "../../../lib/segmentation/pipeline/types.js";
import {
  CHANNEL,
  deliveries,
  droppedMessages,
  inChannelOrder,
  type Scenario,
  type SimMessage,
  type SimulationResult,
  simulate,
  simulateOnDemand,
  ticksAtEveryChange,
} from "./planner-simulation.js";

const config: PipelineConfig = { maxSize: 3, settle: 10, minItems: 1, grace: 0 };
const msg = (id: string, ts: number): MessageRef => ({ id, ts });
const idsOf = (messages: readonly MessageRef[]) => messages.map((m) => m.id);
const segmentIds = (segments: readonly PlannedSegment[]) => segments.map((s) => idsOf(s.messages));
const stateWith = (state: Partial<PlannerState>): PlannerState => ({
  ...EMPTY_PLANNER_STATE,
  ...state,
});
/** Plans ticks in order from an empty state, each with its arrivals; returns every plan. */
function planTicks(
  ticks: [now: number, arrivals: MessageRef[]][],
  settings: PipelineConfig = config,
) {
  let state: PlannerState = EMPTY_PLANNER_STATE;
  return ticks.map(([now, arrivals]) => {
    const result = plan(CHANNEL, state, arrivals, now, settings);
    state = result.state;
    return result;
  });
}

describe("plan: re-read arrivals", () => {
  it("ignores arrivals already in the tail and repeats within one read", () => {
    const state = stateWith({ tail: [msg("a", 1)] });
    const result = plan(CHANNEL, state, [msg("a", 1), msg("b", 2), msg("b", 2)], 3, config);
    expect(idsOf(result.state.tail)).toEqual(["a", "b"]);
    expect(result.segments).toEqual([]);
    expect(result.late).toEqual([]);
  });
});

describe("plan: late messages", () => {
  const recent: EmittedBound[] = [
    { segmentId: "S1", first: msg("a", 10) },
    { segmentId: "S2", first: msg("d", 30) },
  ];
  const state = stateWith({ watermark: msg("m", 50), recent });

  it("groups late arrivals by the emitted segment they belong after, unknown as null", () => {
    const arrivals = [
      msg("y", 12),
      msg("e", 30),
      msg("x", 5),
      msg("c", 30),
      msg("z", 11),
      msg("l", 50),
      msg("n", 60),
    ];
    const result = plan(CHANNEL, state, arrivals, 61, config);
    expect(result.segments.map((s) => [s.belongsAfter, idsOf(s.messages), s.late])).toEqual([
      [null, ["x"], true],
      ["S1", ["z", "y", "c"], true],
      ["S2", ["e", "l"], true],
    ]);
    expect(result.segments.map((s) => s.segmentId)).toEqual(
      [msg("x", 5), msg("z", 11), msg("e", 30)].map((m) => segmentId(CHANNEL, m, true)),
    );
    expect(idsOf(result.late)).toEqual(["x", "z", "y", "c", "e", "l"]);
    // Late messages re-open nothing: the watermark, recent segments and tail are as before.
    expect(result.state).toEqual({ ...state, tail: [msg("n", 60)] });
  });

  it("delivers late messages below minItems rather than dropping them", () => {
    const result = plan(CHANNEL, state, [msg("b", 20)], 61, { ...config, minItems: 3 });
    expect(segmentIds(result.segments)).toEqual([["b"]]);
    expect(result.dropped).toEqual([]);
  });
});

describe("plan: settled conversations", () => {
  it("folds an undersized last piece into the one before", () => {
    const arrivals = [msg("a", 0), msg("b", 1), msg("c", 2), msg("d", 3)];
    const result = plan(CHANNEL, EMPTY_PLANNER_STATE, arrivals, 100, { ...config, minItems: 2 });
    expect(segmentIds(result.segments)).toEqual([["a", "b", "c", "d"]]);
    expect(result.state).toEqual(
      stateWith({
        watermark: msg("d", 3),
        recent: [{ segmentId: segmentId(CHANNEL, msg("a", 0), false), first: msg("a", 0) }],
      }),
    );
    expect(result.nextDueAt).toBeNull();
  });

  it("drops final pieces below minItems, reporting their messages", () => {
    const settings = { ...config, maxSize: 1, minItems: 2 };
    const arrivals = [msg("a", 0), msg("b", 1), msg("c", 2), msg("lonely", 50)];
    const result = plan(CHANNEL, EMPTY_PLANNER_STATE, arrivals, 100, settings);
    expect(segmentIds(result.segments)).toEqual([["b", "c"]]);
    expect(idsOf(result.dropped)).toEqual(["a", "lonely"]);
    expect(result.state.watermark).toEqual(msg("lonely", 50));
  });

  it("waits for settle plus grace after the last message", () => {
    const settings = { ...config, grace: 5 };
    const [early, due] = planTicks(
      [
        [15, [msg("a", 0)]],
        [16, []],
      ],
      settings,
    );
    expect(early.segments).toEqual([]);
    expect(early.nextDueAt).toBe(16);
    expect(segmentIds(due.segments)).toEqual([["a"]]);
  });
});

describe("plan: the open conversation", () => {
  it("with minItems 1, emits every piece but the last at once", () => {
    const arrivals = [msg("a", 0), msg("b", 1), msg("c", 2)];
    const result = plan(CHANNEL, EMPTY_PLANNER_STATE, arrivals, 3, { ...config, maxSize: 2 });
    expect(segmentIds(result.segments)).toEqual([["a", "b"]]);
    expect(idsOf(result.state.tail)).toEqual(["c"]);
    expect(result.state.watermark).toEqual(msg("b", 1));
  });

  it("emits a piece only once the piece after it holds minItems items, then unchanged", () => {
    const settings = { ...config, minItems: 2 };
    const four = [msg("a", 0), msg("b", 1), msg("c", 2), msg("d", 3)];
    // Had the conversation settled now, [d] would fold into [a, b, c]: it cannot be final yet.
    const [waiting, complete] = planTicks(
      [
        [4, four],
        [5, [msg("e", 4)]],
      ],
      settings,
    );
    expect(waiting.segments).toEqual([]);
    expect(idsOf(waiting.state.tail)).toEqual(["a", "b", "c", "d"]);
    expect(segmentIds(complete.segments)).toEqual([["a", "b", "c"]]);
    expect(idsOf(complete.state.tail)).toEqual(["d", "e"]);
    const settledAlone = plan(CHANNEL, EMPTY_PLANNER_STATE, four, 100, settings);
    expect(segmentIds(settledAlone.segments)).toEqual([["a", "b", "c", "d"]]);
  });

  it("considers only messages beyond grace, so a reordered arrival within grace is not late", () => {
    const settings = { ...config, maxSize: 1, grace: 5 };
    const all = [msg("a", 0), msg("d", 1), msg("b", 2), msg("c", 4)];
    const plans = planTicks(
      [
        [4, [msg("a", 0), msg("b", 2), msg("c", 4)]],
        [6, [msg("d", 1)]],
        [100, []],
      ],
      settings,
    );
    expect(plans[0].segments).toEqual([]);
    expect(plans.flatMap((p) => p.late)).toEqual([]);
    const reference = new ConversationSegmenter(settings).closedSegments(all, 100, (m) => m.ts);
    expect(segmentIds(plans.flatMap((p) => p.segments))).toEqual(reference.map(idsOf));
  });
});

describe("plan: nextDueAt", () => {
  const settings = { ...config, grace: 2 };

  it("is null with an empty tail", () => {
    expect(plan(CHANNEL, EMPTY_PLANNER_STATE, [], 5, settings).nextDueAt).toBeNull();
  });

  it("is when the tail settles: its last message + settle + grace + 1", () => {
    const result = plan(CHANNEL, EMPTY_PLANNER_STATE, [msg("a", 5), msg("b", 10)], 20, settings);
    expect(result.nextDueAt).toBe(10 + 10 + 2 + 1);
  });

  it("is earlier when a message of the tail is still within grace", () => {
    const result = plan(CHANNEL, EMPTY_PLANNER_STATE, [msg("a", 15), msg("b", 19)], 20, settings);
    expect(result.nextDueAt).toBe(19 + 2 + 1);
  });
});

describe("plan: recent segments", () => {
  it("keeps only the last RECENT_LIMIT emitted segments", () => {
    const old = Array.from({ length: RECENT_LIMIT - 1 }, (_, i) => ({
      segmentId: `old-${i}`,
      first: msg(`o${i}`, i),
    }));
    const arrivals = [msg("a", 100), msg("b", 101), msg("c", 102)];
    const state = stateWith({ watermark: msg("o62", 62), recent: old });
    const result = plan(CHANNEL, state, arrivals, 200, { ...config, maxSize: 1 });
    expect(result.state.recent).toHaveLength(RECENT_LIMIT);
    expect(result.state.recent[0].segmentId).toBe("old-2");
    expect(result.state.recent.slice(-3).map((b) => b.first.id)).toEqual(["a", "b", "c"]);
  });
});

describe("segmentId", () => {
  it("is a stable hash of the channel, the first message id and lateness", () => {
    expect(segmentId(CHANNEL, msg("m1", 1), false)).toBe("cf2779d1cbb136e84d7ba4ffa4f02cc4");
    expect(segmentId(CHANNEL, msg("m1", 1), true)).toBe("53c1e2275bb60760fdd337be7d9473c4");
    expect(segmentId("chan-2", msg("m1", 1), false)).not.toBe(
      segmentId(CHANNEL, msg("m1", 1), false),
    );
  });
});

describe("plan: configuration", () => {
  it.each([
    ["maxSize", 0],
    ["maxSize", 1.5],
    ["minItems", 0],
    ["settle", -1],
    ["settle", Number.POSITIVE_INFINITY],
    ["grace", Number.NaN],
  ])("rejects %s = %s, naming it", (name, value) => {
    expect(() => plan(CHANNEL, EMPTY_PLANNER_STATE, [], 0, { ...config, [name]: value })).toThrow(
      new RegExp(`^${name} must`),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Property tests over simulated channels: guarantees 1 to 4 of docs/specs/pipeline.md.

interface GeneratedMessage {
  idNumber: number;
  /** After the previous message: a few ms, exactly settle, one more, or longer than settle. */
  gap: number | "settle" | "settle+1" | { silence: number };
  lag: number;
  slow: boolean;
}

type ArrivalMode = "in order" | "reordered within grace" | "some beyond grace";

const settings = fc.record({
  maxSize: fc.integer({ min: 1, max: 8 }),
  settle: fc.integer({ min: 0, max: 20 }),
  minItems: fc.integer({ min: 1, max: 4 }),
  grace: fc.integer({ min: 0, max: 5 }),
});
const generatedMessages = fc.uniqueArray(
  fc.record({
    idNumber: fc.integer({ min: 0, max: 999 }),
    gap: fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 0, max: 3 }) },
      { weight: 1, arbitrary: fc.constantFrom("settle" as const, "settle+1" as const) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 60 }).map((n) => ({ silence: n })) },
    ),
    lag: fc.nat(1000),
    slow: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
  }),
  { selector: (m) => m.idNumber, minLength: 1, maxLength: 50, size: "medium" },
);
/** Ticks near messages' timestamps or arrivals, so that they cover the whole stream. */
const tickSpecs = fc.array(
  fc.record({
    anchor: fc.nat(),
    onArrival: fc.boolean(),
    offset: fc.integer({ min: -2, max: 30 }),
    crash: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
    reread: fc.boolean(),
  }),
  { maxLength: 60, size: "medium" },
);

/** Timestamps from gaps, ids that order differently from generation (and "m10" < "m9"). */
function channelStream(
  generated: GeneratedMessage[],
  { settle, grace }: PipelineConfig,
  mode: ArrivalMode,
): SimMessage[] {
  let ts = 1000;
  const messages = generated.map(({ idNumber, gap, lag, slow }) => {
    ts += typeof gap === "number" ? gap : gap === "settle" ? settle : settle + 1;
    if (typeof gap === "object") ts += settle + gap.silence;
    const delay =
      mode === "some beyond grace" && slow
        ? grace + 1 + (lag % (2 * settle + 60))
        : lag % (grace + 1);
    return { id: `m${idNumber}`, ts, arrivesAt: ts + delay };
  });
  return mode === "in order" ? inOrderArrival(messages) : messages;
}

/** Arrival in channel order, each message still within grace of its timestamp. */
function inOrderArrival(messages: SimMessage[]): SimMessage[] {
  let readableFrom = Number.NEGATIVE_INFINITY;
  return inChannelOrder(messages).map((m) => {
    readableFrom = Math.max(readableFrom, m.arrivesAt);
    return { ...m, arrivesAt: readableFrom };
  });
}

function scenarios(mode: ArrivalMode): fc.Arbitrary<Scenario> {
  return fc.tuple(settings, generatedMessages, tickSpecs).map(([config, generated, ticks]) => {
    const messages = channelStream(generated, config, mode);
    const tickAt = ({ anchor, onArrival, offset }: (typeof ticks)[number]) => {
      const message = messages[anchor % messages.length];
      return (onArrival ? message.arrivesAt : message.ts) + offset;
    };
    return {
      config,
      messages,
      ticks: ticks
        .map((tick) => ({ now: tickAt(tick), crash: tick.crash, reread: tick.reread }))
        .sort((a, b) => a.now - b.now),
    };
  });
}

/** G1: every message in exactly one delivered segment or dropped, never both. */
function expectEachMessageOnce(scenario: Scenario, result: SimulationResult): void {
  const accounted = [
    ...deliveries(result).flatMap((s) => idsOf(s.messages)),
    ...idsOf(droppedMessages(result)),
  ];
  expect(accounted.toSorted()).toEqual(scenario.messages.map((m) => m.id).toSorted());
}

/** G3: unique ids, derived from the first message; non-late segments in channel order. */
function expectIdentityAndOrder(result: SimulationResult): void {
  const delivered = deliveries(result);
  expect(new Set(delivered.map((s) => s.segmentId)).size).toBe(delivered.length);
  for (const s of delivered) {
    expect(s.segmentId).toBe(segmentId(CHANNEL, s.messages[0], s.late));
    expect(s.messages).toEqual(inChannelOrder(s.messages));
  }
  const onTime = delivered.filter((s) => !s.late);
  for (let i = 1; i < onTime.length; i++) {
    const previousLast = onTime[i - 1].messages.at(-1) as MessageRef;
    expect(compareRefs(previousLast, onTime[i].messages[0])).toBeLessThan(0);
  }
}

describe("plan: simulated channels with arrival within grace (G1, G2, G3)", () => {
  it.each(["in order", "reordered within grace"] as const)(
    "delivers exactly what one segmenter run over the final stream returns, arrival %s",
    (mode) => {
      fc.assert(
        fc.property(scenarios(mode), (scenario) => {
          const result = simulate(scenario);
          const delivered = deliveries(result);
          const all = inChannelOrder(scenario.messages);
          const reference = new ConversationSegmenter(scenario.config).closedSegments(
            all,
            result.finalNow,
            (m) => m.ts,
          );
          expect(delivered.filter((s) => s.late)).toEqual([]);
          expect(segmentIds(delivered)).toEqual(reference.map(idsOf));
          const kept = new Set(reference.flat().map((m) => m.id));
          expect(idsOf(inChannelOrder(droppedMessages(result)))).toEqual(
            idsOf(all.filter((m) => !kept.has(m.id))),
          );
          expectEachMessageOnce(scenario, result);
          expectIdentityAndOrder(result);
          expect(deliveries(simulate(scenario))).toEqual(delivered);
        }),
        { numRuns: 1000 },
      );
    },
  );
});

/**
 * G4, tick by tick: a message first read at or before the last message done so far (delivered
 * on time or dropped) is delivered late in that tick, and only those; a late segment names a
 * segment delivered earlier (or null) that starts at or before it.
 */
function expectLatePolicy(result: SimulationResult): void {
  let done: MessageRef | null = null;
  const read = new Set<string>();
  const deliveredBefore = new Map<string, PlannedSegment>();
  for (const { arrivals, plan: planned } of result.applied) {
    const firstRead: MessageRef[] = [];
    for (const m of arrivals) {
      if (read.has(m.id)) continue;
      read.add(m.id);
      firstRead.push(m);
    }
    const expectedLate = firstRead.filter((m) => done !== null && compareRefs(m, done) <= 0);
    const lateSegments = planned.segments.filter((s) => s.late);
    expect(lateSegments.flatMap((s) => idsOf(s.messages))).toEqual(
      idsOf(inChannelOrder(expectedLate)),
    );
    expect(planned.late).toEqual(inChannelOrder(expectedLate));
    for (const late of lateSegments) {
      if (late.belongsAfter === null) continue;
      const anchor = deliveredBefore.get(late.belongsAfter);
      expect(anchor?.late).toBe(false);
      expect(compareRefs(anchor?.messages[0] as MessageRef, late.messages[0])).toBeLessThan(0);
    }
    for (const s of planned.segments) deliveredBefore.set(s.segmentId, s);
    const finished = planned.segments.filter((s) => !s.late).flatMap((s) => s.messages);
    for (const m of [...finished, ...planned.dropped]) {
      if (done === null || compareRefs(m, done) > 0) done = m;
    }
  }
}

describe("plan: simulated channels with messages arriving beyond grace (G1, G3, G4)", () => {
  it("loses and repeats nothing, delivers what lands at or before the done part as late", () => {
    fc.assert(
      fc.property(scenarios("some beyond grace"), (scenario) => {
        const result = simulate(scenario);
        expectEachMessageOnce(scenario, result);
        expectIdentityAndOrder(result);
        expectLatePolicy(result);
        expect(deliveries(simulate(scenario))).toEqual(deliveries(result));
      }),
      { numRuns: 1000 },
    );
  });
});

describe("plan: nextDueAt with ticks only on arrivals and when due", () => {
  /** When each segment was delivered and each dropped message reported. */
  const timeline = ({ applied }: SimulationResult) =>
    applied.flatMap(({ now, plan: planned }) => [
      ...planned.segments.map((s) => [now, s.segmentId]),
      ...planned.dropped.map((m) => [now, m.id]),
    ]);

  it("delivers everything when ticking at every moment a plan can change would", () => {
    fc.assert(
      fc.property(scenarios("some beyond grace"), (scenario) => {
        const always = simulate({ ...scenario, ticks: ticksAtEveryChange(scenario) });
        expect(timeline(simulateOnDemand(scenario))).toEqual(timeline(always));
      }),
      { numRuns: 500 },
    );
  });
});
