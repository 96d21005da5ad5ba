import { messagePermalink } from "convoseg/messages";
import { describe, expect, it } from "vitest";

const C = "C0HELP";

describe("messagePermalink", () => {
  it("gives Slack's archives link, a thread reply's naming its thread", () => {
    expect(messagePermalink({ id: "1741000000.000100", channel: C, platform: "slack" })).toBe(
      `https://slack.com/archives/${C}/p1741000000000100`,
    );
    expect(
      messagePermalink({
        id: "1741000000.000200",
        channel: C,
        platform: "slack",
        thread: "1741000000.000100",
      }),
    ).toBe(
      `https://slack.com/archives/${C}/p1741000000000200?thread_ts=1741000000.000100&cid=${C}`,
    );
    // A thread's root is linked as itself.
    const root = { id: "1741000000.000100", channel: C, platform: "slack" };
    expect(messagePermalink({ ...root, thread: root.id })).toBe(messagePermalink(root));
  });

  it("links nothing it cannot: another platform, no platform, ids not of Slack's shape", () => {
    const ts = "1741000000.000100";
    for (const message of [
      { id: ts, channel: "123456789012345678", platform: "discord" },
      { id: ts, channel: "-1001234567890", platform: "telegram" },
      { id: ts, channel: C },
      { id: "x", channel: C, platform: "slack" },
      { id: `${ts}"><script>`, channel: C, platform: "slack" },
      { id: ts, channel: "c0help", platform: "slack" },
      { id: ts, channel: 'C0"onclick=x', platform: "slack" },
      { id: ts, channel: "C0/../../evil.example", platform: "slack" },
    ]) {
      expect(messagePermalink(message), JSON.stringify(message)).toBe("");
    }
    // A thread that is no ts is left out, never written into the link.
    expect(messagePermalink({ id: ts, channel: C, platform: "slack", thread: "a&b=c" })).toBe(
      `https://slack.com/archives/${C}/p1741000000000100`,
    );
  });
});
