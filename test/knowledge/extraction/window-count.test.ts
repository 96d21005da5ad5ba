/**
 * `windowCount` against what really happens: the splitters' windows, and the model calls the
 * analyzer makes. The deployment sizes the extraction function's timeout from it.
 */

import { Analyzer, type LLM, type Route, windowCount } from "convoseg/extraction";
import {
  slidingWindows,
  splitNonPrefixWindows,
  splitPrefixWindows,
  type Turn,
} from "convoseg/windows";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const ROLES = ["user", "assistant", "tool"] as const;
const users = (n: number): Turn[] =>
  Array.from({ length: n }, (_, i) => ({ role: "user", content: `u${i}` }));

const sizing = fc.record({
  turns: fc.integer({ min: 0, max: 300 }),
  windowSize: fc.integer({ min: 1, max: 40 }),
  overlapShare: fc.double({ min: 0, max: 0.99, noNaN: true }),
  prefixStep: fc.integer({ min: 1, max: 12 }),
  maxWindows: fc.integer({ min: 1, max: 40 }),
});
const settings = (s: typeof sizing extends fc.Arbitrary<infer T> ? T : never) => ({
  ...s,
  overlap: Math.floor(s.overlapShare * s.windowSize),
});

describe("windowCount", () => {
  it("counts the sliding route's windows as slidingWindows cuts them", () => {
    fc.assert(
      fc.property(sizing, (s) => {
        const { turns, windowSize, overlap } = settings(s);
        expect(windowCount("sliding", settings(s))).toBe(
          slidingWindows(users(turns), windowSize, overlap).length,
        );
      }),
    );
  });

  it("counts prefix and non_prefix windows as the splitters cut a transcript of user turns", () => {
    fc.assert(
      fc.property(sizing, (s) => {
        const { turns, prefixStep, maxWindows } = settings(s);
        expect(windowCount("prefix", settings(s))).toBe(
          splitPrefixWindows(users(turns), prefixStep, maxWindows).length,
        );
        expect(windowCount("non_prefix", settings(s))).toBe(
          splitNonPrefixWindows(users(turns), prefixStep, maxWindows).length,
        );
      }),
    );
  });

  it("is the most windows any mix of roles gives", () => {
    const transcript = fc.array(fc.constantFrom(...ROLES), { maxLength: 120 });
    fc.assert(
      fc.property(sizing, transcript, (s, roles) => {
        const turns = roles.map((role, i) => ({ role, content: `t${i}` }));
        const { prefixStep, maxWindows } = settings(s);
        const most = { ...settings(s), turns: turns.length };
        expect(splitPrefixWindows(turns, prefixStep, maxWindows).length).toBeLessThanOrEqual(
          windowCount("prefix", most),
        );
        expect(splitNonPrefixWindows(turns, prefixStep, maxWindows).length).toBeLessThanOrEqual(
          windowCount("non_prefix", most),
        );
      }),
    );
  });

  it("counts per step, at most maxWindows; full one window, full2 two passes", () => {
    const sizing = { turns: 12, windowSize: 20, overlap: 2, prefixStep: 5, maxWindows: 100 };
    // Windows ending after turns 5 and 10, and the whole.
    expect(windowCount("prefix", sizing)).toBe(3);
    expect(windowCount("non_prefix", sizing)).toBe(3);
    expect(windowCount("prefix", { ...sizing, turns: 500, maxWindows: 8 })).toBe(8);
    expect(windowCount("sliding", { ...sizing, turns: 500 })).toBe(28);
    expect(windowCount("full", sizing)).toBe(1);
    expect(windowCount("full2", sizing)).toBe(2);
  });

  it.each<Route>(["sliding", "prefix", "non_prefix", "full", "full2"])(
    "is the number of model calls the analyzer makes on the %s route",
    async (route) => {
      const options = { windowSize: 7, overlap: 2, prefixStep: 3, maxWindows: 6 };
      for (const turns of [0, 1, 3, 7, 8, 20, 40]) {
        let calls = 0;
        const llm: LLM = {
          chatJSON: async () => {
            calls++;
            return { candidates: [] };
          },
        };
        await new Analyzer(llm, { route, ...options }).analyze(users(turns));
        expect(calls, `${turns} turns`).toBe(windowCount(route, { ...options, turns }));
      }
    },
  );
});
