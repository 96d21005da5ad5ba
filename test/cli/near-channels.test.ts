import { describe, expect, it } from "vitest";
import { channelWord, nearChannels } from "../../cli/near-channels.js";

describe("nearChannels", () => {
  it("finds a stored id that differs by an invisible character, case or a typo, nearest first", () => {
    const known = ["desk\u200b", "Desk", "dusk", "#rust", "desk", "deskstop"];
    expect(nearChannels("desk", known)).toEqual(["Desk", "desk\u200b", "dusk"]);
    expect(nearChannels("\u202erust", known)).toEqual(["#rust"]);
    expect(nearChannels("#rsut", known)).toEqual(["#rust"]);
    expect(nearChannels("nothing-like-it", known)).toEqual([]);
  });
});

describe("channelWord", () => {
  it("types an id for the shell, escaping what a terminal would not show", () => {
    expect(channelWord("general")).toBe("general");
    expect(channelWord("#help desk")).toBe("'#help desk'");
    expect(channelWord("desk\u200b")).toBe("$'desk\\u200b'");
    expect(channelWord("it's\u202e")).toBe("$'it\\'s\\u202e'");
    expect(channelWord("x\u{e0001}")).toBe("$'x\\U000e0001'");
  });
});
