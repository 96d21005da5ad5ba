import { permalinkPlatform } from "convoseg/identity";
import { messagePermalink } from "convoseg/messages";
import fc from "fast-check";
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
      { id: ts, channel: "123456789012345678", platform: "discord", guild: "123456789012345678" },
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

  it("gives Discord's channels link of a message that carries its guild, none without it", () => {
    const guild = "900000000000000001";
    const channel = "910000000000000001";
    const id = "1195000000000000002";
    expect(messagePermalink({ id, channel, platform: "discord", guild })).toBe(
      `https://discord.com/channels/${guild}/${channel}/${id}`,
    );
    // A direct message (or one stored before guilds were) has no guild: no link, never a guess.
    expect(messagePermalink({ id, channel, platform: "discord" })).toBe("");
    for (const bad of [
      { guild: "x/../evil" },
      { guild: `${guild}/../x` },
      { channel: "general" },
      { id: "1195000000000000002?x=1" },
      { platform: "slack" },
    ]) {
      const message = { id, channel, platform: "discord", guild, ...bad };
      expect(messagePermalink(message), JSON.stringify(bad)).not.toMatch(
        /discord|evil|general|x=1/,
      );
    }
  });

  it("gives Telegram's t.me link: a public group's by name, a supergroup's members', none else", () => {
    const message = { id: "-1001234567890:55", channel: "-1001234567890", platform: "telegram" };
    expect(messagePermalink({ ...message, chatUsername: "ubuntu_help" })).toBe(
      "https://t.me/ubuntu_help/55",
    );
    expect(messagePermalink(message)).toBe("https://t.me/c/1234567890/55");
    // A basic group (negative, no -100) and a private chat (positive) have no link.
    expect(messagePermalink({ id: "-4321:7", channel: "-4321", platform: "telegram" })).toBe("");
    expect(messagePermalink({ id: "4321:7", channel: "4321", platform: "telegram" })).toBe("");
    // A name that is no username is never written: the members' link instead.
    for (const chatUsername of ["a/b", "evil.example/x", "@ubuntu", "ab", "<script>"]) {
      expect(messagePermalink({ ...message, chatUsername })).toBe("https://t.me/c/1234567890/55");
    }
    // A message of another chat, or an id not of the stored shape, links nowhere.
    expect(messagePermalink({ ...message, id: "-1009999:55" })).toBe("");
    expect(messagePermalink({ ...message, id: "55" })).toBe("");
  });

  it("never writes a chat-supplied string into a link, whatever the fields say", () => {
    const hostile = fc.oneof(
      fc.string(),
      fc.constantFrom("a/../b", "x?y=z", "<script>", "javascript:x", " ", "evil.example"),
    );
    const ids = fc.oneof(hostile, fc.stringMatching(/^-?\d{1,20}(:\d{1,12}|\.\d{6})?$/));
    fc.assert(
      fc.property(
        fc.record({
          id: ids,
          channel: fc.oneof(ids, fc.stringMatching(/^[A-Z0-9]{3,11}$/)),
          platform: fc.constantFrom("slack", "discord", "telegram", "irc"),
          thread: fc.option(ids, { nil: undefined }),
          guild: fc.option(fc.oneof(hostile, fc.stringMatching(/^\d{15,21}$/)), { nil: undefined }),
          chatUsername: fc.option(hostile, { nil: undefined }),
        }),
        (message) => {
          const link = messagePermalink(message);
          // Only ids, digits, a username's word characters and the link's own `/.?=&:-`.
          expect(link === "" || permalinkPlatform(link) !== undefined, link).toBe(true);
          expect(link).toMatch(/^[\w/.?=&:-]*$/);
        },
      ),
    );
  });
});
