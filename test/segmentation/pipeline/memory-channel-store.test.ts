import { MemoryChannelStore } from "convoseg/pipeline/store";
import { describeChannelStoreConformance } from "./store-conformance.js";

describeChannelStoreConformance("MemoryChannelStore", async (dueShards) => {
  let now = 0;
  const store = new MemoryChannelStore(() => now, dueShards);
  return { store, positions: store, setNow: (ms) => (now = ms) };
});
