/**
 * Exactly-once under random crash points, as properties (`crash-replay.ts`): whatever the
 * crashes, the distinct segments delivered are exactly those of one segmenter call per channel
 * over its final stream, none late, and a redelivered segment repeats its content; the same for
 * a tick fanned out to several workers, with duplicate workers of a share started meanwhile; and
 * a writer of the marks outside ingestion's protocol (`rogue-writers.ts`); and edits and
 * deletions at random times (`change-replay.ts`). On the in-memory
 * stores, so hundreds of runs take seconds; `tick-properties-aws.emulator.test.ts` runs the same on
 * DynamoDB Local, fewer times.
 */
import { MemoryStore } from "convoseg/history";
import { MemoryChannelStore } from "convoseg/pipeline/store";
import { memoryRogueMarks } from "../../support/rogue-marks.js";
import { describeChangeProperties } from "./change-replay.js";
import { describeCrashProperties, type StoresFactory } from "./crash-replay.js";
import { describeRogueWriters } from "./rogue-writers.js";

const memoryStores: StoresFactory = async (clock, dueShards) => {
  const channels = new MemoryChannelStore(() => clock.now, dueShards);
  const rogue = memoryRogueMarks(channels);
  return { messages: new MemoryStore({ positions: channels }), channels, rogue };
};

describeCrashProperties("memory stores", memoryStores, {
  maxMessages: 40,
  crashRuns: 150,
  fanOutRuns: 150,
  cleanFanOutRuns: 100,
  rogueRuns: 100,
  timeout: 120_000,
});
describeRogueWriters("memory stores", memoryStores);
describeChangeProperties("memory stores", memoryStores, {
  maxMessages: 40,
  runs: 150,
  timeout: 120_000,
});
describeCrashProperties(
  "memory stores",
  memoryStores,
  {
    maxMessages: 40,
    crashRuns: 60,
    fanOutRuns: 60,
    cleanFanOutRuns: 40,
    rogueRuns: 40,
    timeout: 120_000,
  },
  "linked",
);
describeChangeProperties(
  "memory stores",
  memoryStores,
  { maxMessages: 40, runs: 60, timeout: 120_000 },
  "linked",
);
