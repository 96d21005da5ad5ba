import { describe, expect, it } from "vitest";
import { nearChannels } from "../../cli/shared/near-channels.js";

describe("nearChannels", () => {
  it("finds a stored id that differs by an invisible character, case or a typo, nearest first", () => {
    const known = ["desk\u200b", "Desk", "dusk", "#rust", "desk", "deskstop"];
    expect(nearChannels("desk", known)).toEqual(["Desk", "desk\u200b", "dusk"]);
    expect(nearChannels("\u202erust", known)).toEqual(["#rust"]);
    expect(nearChannels("#rsut", known)).toEqual(["#rust"]);
    expect(nearChannels("nothing-like-it", known)).toEqual([]);
  });
});
