/** The memory results store: the term statistics' contract, exactly once, in the unit tier. */
import { MemoryResultStore } from "../../lib/knowledge/index.js";
import { describeTermStatistics } from "./term-statistics.js";

describeTermStatistics("MemoryResultStore", async () => new MemoryResultStore());
