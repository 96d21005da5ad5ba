/**
 * The memory results store in the unit tier: the term statistics' contract, exactly once, and
 * the question index's.
 */

import { MemoryResultStore, type TopicSupport } from "convoseg/knowledge/store";
import { describe, expect, it } from "vitest";
import { describeQuestionIndex, question, resultWith, save } from "./question-index.js";
import { describeTermStatistics } from "./term-statistics.js";

describeTermStatistics("MemoryResultStore", async () => new MemoryResultStore());
describeQuestionIndex("MemoryResultStore", async () => new MemoryResultStore());

describe("MemoryResultStore: the question index, killed between its writes", () => {
  it("holds exactly the saved result's entries once a crashed save is done again", async () => {
    const T = Date.UTC(2026, 5, 1);
    const before = resultWith("c", "s1", [
      question("a", T),
      question("b", T + 1),
      question("x", T + 2),
    ]);
    const after = resultWith(
      "c",
      "s1",
      [question("a", T, "answered", { answer: "yes" }), question("b", T + 1), question("d", T + 3)],
      { extractedAt: new Date(T + 60_000).toISOString() },
    );
    for (let crashAt = 1; ; crashAt++) {
      let writes = 0;
      const store = new MemoryResultStore({
        beforeWrite: () => {
          if (++writes === crashAt) throw new Error(`crashed at write ${crashAt}`);
        },
      });
      writes = Number.NEGATIVE_INFINITY; // the first save is not crashed
      await save(store, before);
      writes = 0;
      const crashed = await save(store, after, before).then(
        () => false,
        () => true,
      );
      writes = Number.NEGATIVE_INFINITY;
      await save(store, after, (await store.getResult("c", "s1")) ?? before);
      const page = await store.listQuestions("c", { limit: 10 });
      const listed = page.entries.map((e) => [e.id, e.status, e.extractedAt]);
      expect({ crashAt, listed }).toEqual({
        crashAt,
        listed: [
          ["a", "answered", after.extractedAt],
          ["b", "unanswered", after.extractedAt],
          ["d", "unanswered", after.extractedAt],
        ],
      });
      if (!crashed) break;
    }
  });
});

describe("MemoryResultStore: a result's topic entries", () => {
  it("refuses a result that writes one topic entry twice, as the table refuses its batch", async () => {
    const store = new MemoryResultStore();
    const result = resultWith("c", "s1", []);
    const support = (topic: string): TopicSupport => ({
      v: 1,
      channel: "c",
      topic,
      normalizedTopic: topic.toLowerCase(),
      segmentId: "s1",
      candidateId: topic,
      late: false,
      confidence: 1,
      reason: "said",
      tags: [],
      messageIds: null,
      firstTs: result.first.ts,
      lastTs: result.last.ts,
    });
    await store.acquireLease("c", "s1", {
      owner: "o",
      now: Date.now(),
      leaseMs: 60_000,
      expiresAt: Date.now() + 3_600_000,
    });

    await expect(
      store.saveResult(result, [support("FixRes"), support("fixres")], undefined, "o"),
    ).rejects.toThrow(/written twice in one result/);
    expect(await store.getResult("c", "s1")).toBeUndefined();
    expect(await store.listSupports("c")).toEqual([]);
    await store.saveResult(result, [support("FixRes")], undefined, "o");
    expect((await store.listSupports("c")).map((t) => t.normalizedTopic)).toEqual(["fixres"]);
  });
});
