/** Question corrections on the memory store (`./corrections.ts`). */
import { MemoryResultStore } from "convoseg/knowledge/store";
import { describeCorrections } from "./corrections.js";

describeCorrections("the memory store", async () => new MemoryResultStore());
