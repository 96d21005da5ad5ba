import type { TickBudget } from "convoseg/pipeline";

/** A tick budget that lets exactly `channels` channels start, then refuses the rest. */
export function channelBudget(channels: number): TickBudget {
  let started = 0;
  return {
    spent: () => started >= channels,
    startChannel: () => {
      if (started >= channels) return false;
      started++;
      return true;
    },
  };
}
