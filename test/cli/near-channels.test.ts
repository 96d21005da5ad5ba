import { describe, expect, it } from "vitest";
import { nearNames } from "../../cli/shared/near-names.js";

describe("nearNames", () => {
  it("finds a stored id that differs by an invisible character, case or a typo, nearest first", () => {
    const known = ["desk\u200b", "Desk", "dusk", "#rust", "desk", "deskstop"];
    expect(nearNames("desk", known)).toEqual(["Desk", "desk\u200b", "dusk"]);
    expect(nearNames("\u202erust", known)).toEqual(["#rust"]);
    expect(nearNames("#rsut", known)).toEqual(["#rust"]);
    expect(nearNames("nothing-like-it", known)).toEqual([]);
  });
});
