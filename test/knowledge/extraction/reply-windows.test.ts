/**
 * Reply-aware windows through the analyzer (issue 24 §2): on the sliding route a reply's window
 * holds the message it answers when that lies within the last `windowSize` turns, as far as the
 * plain number of windows allows; without links the prompts are exactly the plain ones; and a
 * stored window reply is reused only for the same window, whose turns map back by its own start.
 */

import {
  Analyzer,
  type ExtractionTurn,
  type LLM,
  replyTargets,
  type WindowOutput,
  windowCount,
} from "convoseg/extraction";
import { plainWindowCount, slidingWindowSpans } from "convoseg/windows";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

/**
 * A model that records each prompt's user message and answers one topic over its first turn,
 * named after that turn's message (so that no two windows' topics merge).
 */
function recorder(): { llm: LLM; prompts: string[] } {
  const prompts: string[] = [];
  const llm: LLM = {
    chatJSON: async (messages) => {
      const prompt = messages.find((m) => m.role === "user")?.content ?? "";
      prompts.push(prompt);
      return {
        candidates: [
          {
            topic: `topic ${shown(prompt)[0]}`,
            reason: "r",
            confidence: 0.9,
            tags: [],
            turn_range: [1, 1],
            subjective: false,
          },
        ],
      };
    },
  };
  return { llm, prompts };
}

/** Turns `m0`, `m1`, … with `replyTo[i]` (an index) as turn i's link. */
function turns(n: number, replyTo: Record<number, number> = {}): ExtractionTurn[] {
  return Array.from({ length: n }, (_, i) => {
    const turn: ExtractionTurn = {
      role: "user",
      kind: "user",
      text: `message ${i}`,
      author: "a",
      id: `m${i}`,
    };
    if (replyTo[i] !== undefined) turn.replyTo = `m${replyTo[i]}`;
    return turn;
  });
}

/** The message numbers a prompt shows, in order. */
const shown = (prompt: string) => [...prompt.matchAll(/"message (\d+)"/g)].map((m) => Number(m[1]));

describe("the sliding route with replies", () => {
  it("shows a reply with the message it answers that the plain windows would separate", async () => {
    // Windows of 4 overlapping by 1 over 8 turns: plainly [0,4) [3,7) [6,8), three windows.
    // Turn 5 answers turn 2: the second window starts at 2 instead, [2,6), the third at 5, and
    // there are still three (over 10 turns it would take a fourth: then the plain windows stay).
    const plain = recorder();
    await new Analyzer(plain.llm, { route: "sliding", windowSize: 4, overlap: 1 }).extract(
      turns(8),
    );
    expect(plain.prompts.map(shown)).toEqual([
      [0, 1, 2, 3],
      [3, 4, 5, 6],
      [6, 7],
    ]);
    const linked = recorder();
    const analyzer = new Analyzer(linked.llm, { route: "sliding", windowSize: 4, overlap: 1 });
    const { candidates } = await analyzer.extract(turns(8, { 5: 2 }));
    expect(linked.prompts.map(shown)).toEqual([
      [0, 1, 2, 3],
      [2, 3, 4, 5],
      [5, 6, 7],
    ]);
    expect(linked.prompts[1]).toContain("(reply to Turn 1)");
    // Each window's turn 1 maps back by that window's own start.
    expect(candidates.map((c) => c.turnRange)).toEqual([
      [0, 0],
      [2, 2],
      [5, 5],
    ]);
  });

  it("asks as many windows as the plain route, what the deployment sizes its timeout from", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 8 }).chain((windowSize) =>
          fc.record({
            windowSize: fc.constant(windowSize),
            overlap: fc.integer({ min: 0, max: windowSize - 1 }),
            back: fc.array(fc.option(fc.integer({ min: 1, max: 10 }), { nil: undefined }), {
              maxLength: 40,
            }),
          }),
        ),
        async ({ windowSize, overlap, back }) => {
          const links: Record<number, number> = {};
          back.forEach((distance, i) => {
            if (distance !== undefined && i - distance >= 0) links[i] = i - distance;
          });
          const { llm, prompts } = recorder();
          const options = { route: "sliding" as const, windowSize, overlap };
          await new Analyzer(llm, { ...options, maxConcurrency: 1 }).extract(
            turns(back.length, links),
          );
          const sizing = { turns: back.length, windowSize, overlap, prefixStep: 5, maxWindows: 8 };
          expect(prompts.length).toBe(windowCount("sliding", sizing));
          // Every turn is shown, in windows of at most windowSize that join up.
          const windows = prompts.map(shown);
          expect([...new Set(windows.flat())].sort((x, y) => x - y)).toEqual(back.map((_, i) => i));
          for (const window of windows) expect(window.length).toBeLessThanOrEqual(windowSize);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("asks exactly the plain prompts when no turn replies, ids or not", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 1, max: 10 }),
        async (n, windowSize) => {
          const overlap = Math.floor(windowSize / 3);
          const options = { route: "sliding" as const, windowSize, overlap, maxConcurrency: 1 };
          const withIds = recorder();
          await new Analyzer(withIds.llm, options).extract(turns(n));
          const without = recorder();
          await new Analyzer(without.llm, options).extract(
            turns(n).map(({ id: _id, ...turn }) => turn),
          );
          expect(withIds.prompts).toEqual(without.prompts);
          expect(withIds.prompts.map(shown)).toEqual(
            slidingWindowSpans(n, windowSize, overlap).map(([s, e]) =>
              Array.from({ length: e - s }, (_, i) => s + i),
            ),
          );
        },
      ),
      { numRuns: 100 },
    );
  });

  it("reuses a stored window reply only for the same window, mapped by its own start", async () => {
    // The stored replies of the plain windows: the linked run's first window is the same prompt
    // and is reused; its second and third show other turns (and a reply note), so are asked.
    const stored = new Map<string, WindowOutput>();
    const outputs = {
      get: async (prompt: string) => stored.get(prompt),
      put: async (prompt: string, output: WindowOutput) => {
        stored.set(prompt, output);
      },
    };
    const options = { route: "sliding" as const, windowSize: 4, overlap: 1 };
    await new Analyzer(recorder().llm, options).analyze(
      turns(8).map((t) => ({ role: t.role, content: t.text, author: t.author })),
      { outputs },
    );
    expect(stored.size).toBe(3);
    const linked = recorder();
    const candidates = await new Analyzer(linked.llm, options).analyze(
      turns(8, { 5: 2 }).map((t) => ({
        role: t.role,
        content: t.text,
        author: t.author,
        id: t.id,
        replyTo: t.replyTo,
      })),
      { outputs },
    );
    expect(linked.prompts.map(shown)).toEqual([
      [2, 3, 4, 5],
      [5, 6, 7],
    ]);
    expect(candidates.map((c) => c.turnRange)).toEqual([
      [0, 0],
      [2, 2],
      [5, 5],
    ]);
  });
});

describe("replyTargets", () => {
  it("reads an earlier turn's index; none for itself, a later turn or an unknown id", () => {
    const target = replyTargets([
      { id: "a" },
      { id: "b", replyTo: "a" },
      { id: "c", replyTo: "c" },
      { id: "d", replyTo: "e" },
      { id: "e" },
      { id: "f", replyTo: "elsewhere" },
    ]);
    expect([0, 1, 2, 3, 4, 5].map((i) => target?.(i))).toEqual([
      undefined,
      0,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(replyTargets([{ id: "a" }, { id: "b" }])).toBeUndefined();
  });
});

describe("slidingWindowSpans with a window budget", () => {
  it("never cuts more windows than the budget, and with the plain count as budget still covers all", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }).chain((windowSize) =>
          fc.record({
            windowSize: fc.constant(windowSize),
            overlap: fc.integer({ min: 0, max: windowSize - 1 }),
            back: fc.array(fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }), {
              maxLength: 80,
            }),
          }),
        ),
        ({ windowSize, overlap, back }) => {
          const n = back.length;
          const target = (i: number) => (back[i] === undefined ? undefined : i - (back[i] ?? 0));
          const budget = plainWindowCount(n, windowSize, overlap);
          const spans = slidingWindowSpans(n, windowSize, overlap, target, budget);
          expect(spans.length).toBe(slidingWindowSpans(n, windowSize, overlap).length);
          expect(spans.length).toBeLessThanOrEqual(budget);
          if (n > 0) {
            expect(spans[0][0]).toBe(0);
            expect(spans.at(-1)?.[1]).toBe(n);
          }
          spans.forEach(([s, e], i) => {
            expect(e - s).toBeLessThanOrEqual(windowSize);
            if (i > 0) expect(s).toBeLessThanOrEqual(spans[i - 1][1]);
          });
        },
      ),
      { numRuns: 1000 },
    );
  });
});
