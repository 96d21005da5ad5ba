/** An erasure resets the reply linker (`./linker-reset.ts`), on the memory stores. */
import { MemoryAuditStore } from "convoseg/erasure";
import { MemoryStore } from "convoseg/history";
import { MemoryResultStore } from "convoseg/knowledge/store";
import { MemoryChannelStore } from "convoseg/pipeline/store";
import { describeLinkerReset } from "./linker-reset.js";
import { erasureDependencies } from "./world.js";

describeLinkerReset("the memory stores", async () => {
  const channels = new MemoryChannelStore(() => Date.UTC(2025, 0, 6));
  const history = new MemoryStore({ positions: channels });
  const results = new MemoryResultStore();
  const audits = new MemoryAuditStore();
  return {
    history,
    channels,
    erasure: (now) => erasureDependencies(history, results, audits, { channels, now }),
  };
});
