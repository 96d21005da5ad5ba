/**
 * A pure simulation of the pipeline around the planner, for property tests: one channel whose
 * messages arrive at given times, ticks at given times, and crashes that discard a tick's plan.
 */

import { compareRefs, type MessageRef } from "convoseg/identity";
import { type Plan, plan } from "../../../lib/segmentation/pipeline/planner.js";
import {
  EMPTY_PLANNER_STATE,
  type PipelineConfig,
  type PlannedSegment,
  type PlannerState,
} from "../../../lib/segmentation/pipeline/types.js";

export interface SimMessage extends MessageRef {
  /** When ingestion makes it readable (>= ts unless back-dated). */
  arrivesAt: number;
}

export interface TickSpec {
  now: number;
  /** The plan is computed and then lost: state unchanged, nothing delivered, arrivals re-read. */
  crash: boolean;
  /** The reader also returns the tail again and repeats an arrival (overlapping reads). */
  reread: boolean;
}

export interface Scenario {
  config: PipelineConfig;
  messages: SimMessage[];
  ticks: TickSpec[];
}

/** A tick whose plan was applied. */
interface AppliedTick {
  now: number;
  /** What the reader returned, re-reads included. */
  arrivals: MessageRef[];
  before: PlannerState;
  plan: Plan;
}

export interface SimulationResult {
  applied: AppliedTick[];
  /** The time of the last tick: after every arrival and past the last settle and grace. */
  finalNow: number;
}

export const CHANNEL = "chan-1";

/**
 * Runs the ticks in order and then a last one at `finalNow`. The reader returns, in arrival order,
 * the messages readable by `now` that the last applied tick had not read.
 */
export function simulate({ config, messages, ticks }: Scenario): SimulationResult {
  const channel = new SimulatedChannel(config, messages);
  const finalNow = Math.max(
    ...messages.map((m) => Math.max(m.arrivesAt, m.ts + config.settle + config.grace + 1)),
  );
  for (const tick of ticks) if (tick.now < finalNow) channel.tick(tick);
  channel.tick({ now: finalNow, crash: false, reread: false });
  return { applied: channel.applied, finalNow };
}

/**
 * Ticks only when something new is readable or the last plan's `nextDueAt` has come, as the
 * scheduler's due index does, until nothing is pending.
 */
export function simulateOnDemand({ config, messages }: Scenario): SimulationResult {
  const channel = new SimulatedChannel(config, messages);
  let due: number | null = null;
  for (;;) {
    const times: number[] = [channel.nextArrival(), due].filter((t) => t != null);
    if (times.length === 0) break;
    due = channel.tick({ now: Math.min(...times), crash: false, reread: false }).nextDueAt;
  }
  return { applied: channel.applied, finalNow: channel.applied.at(-1)?.now ?? 0 };
}

/**
 * Ticks at every time at which a plan can change: when a message becomes readable, moves beyond
 * grace, or its conversation could settle (integer timestamps).
 */
export function ticksAtEveryChange({ config, messages }: Scenario): TickSpec[] {
  const { settle, grace } = config;
  const times = messages.flatMap((m) => [m.arrivesAt, m.ts + grace + 1, m.ts + settle + grace + 1]);
  return [...new Set(times)]
    .sort((a, b) => a - b)
    .map((now) => ({ now, crash: false, reread: false }));
}

/** One channel's messages, the state applied so far and how far the reader got. */
class SimulatedChannel {
  readonly applied: AppliedTick[] = [];
  private readonly log: SimMessage[];
  private state: PlannerState = EMPTY_PLANNER_STATE;
  private read = 0;

  constructor(
    private readonly config: PipelineConfig,
    messages: readonly SimMessage[],
  ) {
    this.log = [...messages].sort((a, b) => a.arrivesAt - b.arrivesAt);
  }

  nextArrival(): number | undefined {
    return this.log[this.read]?.arrivesAt;
  }

  tick({ now, crash, reread }: TickSpec): Plan {
    const readable = this.log.filter((m) => m.arrivesAt <= now).length;
    const arrivals = readerResult(this.log.slice(this.read, readable), this.state, reread);
    const before = this.state;
    const result = plan(CHANNEL, deepFreeze(before), deepFreeze(arrivals), now, this.config);
    if (!crash) {
      this.applied.push({ now, arrivals, before, plan: result });
      this.state = result.state;
      this.read = readable;
    }
    return result;
  }
}

function readerResult(unread: SimMessage[], state: PlannerState, reread: boolean): MessageRef[] {
  const fresh = unread.map(({ id, ts }) => ({ id, ts }));
  if (!reread) return fresh;
  return [...state.tail, ...fresh, ...fresh.slice(0, 1)];
}

/** Freezes what the planner gets, so that a mutation of its inputs throws. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const nested of Object.values(value)) deepFreeze(nested);
    Object.freeze(value);
  }
  return value;
}

/** Every delivered segment, in delivery order. */
export function deliveries(result: SimulationResult): PlannedSegment[] {
  return result.applied.flatMap((tick) => tick.plan.segments);
}

export function droppedMessages(result: SimulationResult): MessageRef[] {
  return result.applied.flatMap((tick) => tick.plan.dropped);
}

export function inChannelOrder<T extends MessageRef>(messages: readonly T[]): T[] {
  return [...messages].sort(compareRefs);
}
