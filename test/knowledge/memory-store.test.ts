/**
 * The memory results store in the unit tier: the term statistics' contract, exactly once, and
 * the question index's.
 */
import { MemoryResultStore } from "../../lib/knowledge/index.js";
import { describeQuestionIndex } from "./question-index.js";
import { describeTermStatistics } from "./term-statistics.js";

describeTermStatistics("MemoryResultStore", async () => new MemoryResultStore());
describeQuestionIndex("MemoryResultStore", async () => new MemoryResultStore());
