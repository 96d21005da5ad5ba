/**
 * How many channels a tick may start. The tick asks `startChannel` each time it is about to
 * start one and takes no more after the first refusal: the rest stay due for the next tick, and
 * the tick reports it stopped early. A budget already `spent` when the tick begins keeps it from
 * reading the due index at all.
 */
export interface TickBudget {
  /** Nothing may start any more: asked once, before the tick reads the due index. */
  spent(): boolean;
  /** Whether the tick may start the channel it is about to take. */
  startChannel(): boolean;
}

/** No bound: the tick takes every due channel. */
export const UNLIMITED_BUDGET: TickBudget = { spent: () => false, startChannel: () => true };

/**
 * The deployed tick's budget: no channel starts at or after `deadline` (epoch ms by `clock`), the
 * invocation's end less the budget margin, so that what is left waits for the next tick instead
 * of a timeout.
 */
export function deadlineBudget(deadline: number, clock: () => number = Date.now): TickBudget {
  const spent = () => clock() >= deadline;
  return { spent, startChannel: () => !spent() };
}
