/**
 * bench:disentangle's verdicts on issue 38's targets (`bench/disentangle/targets.ts`): each
 * target met or not at its bound, the quality targets read on Ubuntu test only, and the speed
 * target on the slowest group.
 */
import { describe, expect, it } from "vitest";
import {
  formatTargets,
  issueTargets,
  type LinkedScores,
  type TargetGroup,
} from "../../bench/disentangle/targets.js";

const scores = (over: Partial<LinkedScores> = {}): LinkedScores => ({
  exact: { f: 45.5 },
  link: { f: 74.3 },
  whole: 80,
  mixing: 1.5,
  messagesPerSecond: 30_000,
  ...over,
});
const group = (name: string, over: Partial<LinkedScores> = {}): TargetGroup => ({
  group: name,
  linked: scores(over),
});
const MODEL = 213_000;
const met = (groups: TargetGroup[], bytes = MODEL) =>
  Object.fromEntries(issueTargets(groups, bytes).map((v) => [v.target.split(" ")[0], v.met]));

describe("bench:disentangle targets", () => {
  it("meets every target at its bound, on Ubuntu test and the slowest group", () => {
    const groups = [group("ubuntu dev", { whole: 10 }), group("ubuntu test"), group("stripe")];
    expect(met(groups)).toEqual({
      exact: true,
      link: true,
      whole: true,
      "20,000": true,
      model: true,
    });
  });

  it("misses each target just past its bound", () => {
    expect(met([group("ubuntu test", { exact: { f: 37.9 } })]).exact).toBe(false);
    expect(met([group("ubuntu test", { link: { f: 69.9 } })]).link).toBe(false);
    expect(met([group("ubuntu test", { whole: 79.9 })]).whole).toBe(false);
    // Whole enough, but mixing too much: the pair is one target.
    expect(met([group("ubuntu test", { mixing: 1.51 })]).whole).toBe(false);
    expect(
      met([group("ubuntu test"), group("stripe", { messagesPerSecond: 19_999 })])["20,000"],
    ).toBe(false);
    expect(met([group("ubuntu test")], 5_000_000).model).toBe(false);
  });

  it("judges quality on Ubuntu test alone, and names the slowest group", () => {
    const verdicts = issueTargets(
      [group("ubuntu dev", { messagesPerSecond: 25_000 }), group("mediawiki", { whole: 95 })],
      MODEL,
    );
    expect(verdicts.map((v) => v.target.split(" ")[0])).toEqual(["20,000", "model"]);
    expect(verdicts[0]?.value).toBe("25,000 (ubuntu dev, the slowest)");
    const line = formatTargets(
      issueTargets([group("ubuntu test", { whole: 76.9, mixing: 1.43 })], MODEL),
    );
    expect(line).toContain("whole >= 80% at mixing <= 1.50: 76.9% at 1.43, NOT met");
    expect(line).toContain("model file under 5 MB: 213 kB, met");
  });
});
