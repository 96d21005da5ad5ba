import { channelLabel } from "convoseg/identity";
import { describe, expect, it } from "vitest";

describe("channelLabel", () => {
  it("names a channel by its name beside its id, once where they say the same", () => {
    expect(channelLabel("C0GENERAL", "general")).toBe("general (C0GENERAL)");
    expect(channelLabel("C0GENERAL", undefined)).toBe("C0GENERAL");
    expect(channelLabel("desk", "desk")).toBe("desk");
    // IRC's `#ubuntu` of the channel `ubuntu`; a `#` of another name is a name of its own.
    expect(channelLabel("ubuntu", "#ubuntu")).toBe("#ubuntu");
    expect(channelLabel("ubuntu", "#kubuntu")).toBe("#kubuntu (ubuntu)");
  });
});
