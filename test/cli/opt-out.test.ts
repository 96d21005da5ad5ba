import { describe, expect, it } from "vitest";
import { statsOptOut } from "../../cli/shared/opt-out.js";

describe("STATS_OPT_OUT", () => {
  it("reads names comma-separated, or as the JSON array the deployed functions get", () => {
    expect(statsOptOut(undefined)).toEqual([]);
    expect(statsOptOut("  ")).toEqual([]);
    expect(statsOptOut(" ann, U02ABC ,,")).toEqual(["ann", "U02ABC"]);
    expect(statsOptOut('["ann", " bob "]')).toEqual(["ann", "bob"]);
    // A name may begin with a bracket: what is not JSON is a list.
    expect(statsOptOut("[afk]ann, bob")).toEqual(["[afk]ann", "bob"]);
    expect(statsOptOut('{"a":1}')).toEqual(['{"a":1}']);
  });

  it("is read from the environment by default", () => {
    const before = process.env.STATS_OPT_OUT;
    process.env.STATS_OPT_OUT = "carol";
    try {
      expect(statsOptOut()).toEqual(["carol"]);
    } finally {
      if (before === undefined) delete process.env.STATS_OPT_OUT;
      else process.env.STATS_OPT_OUT = before;
    }
  });
});
