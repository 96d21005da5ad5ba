import type { ExportMessage } from "convoseg/exports";
import { toChatMessage } from "convoseg/exports";
import { InvalidMessageError, parseChatMessage } from "convoseg/messages";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const base = { id: "m1", ts: 1_000, channel: "C1" };

const fault = (value: Record<string, unknown>): { field: string; reason: string } => {
  try {
    parseChatMessage({ ...base, ...value });
  } catch (error) {
    if (error instanceof InvalidMessageError) return { field: error.field, reason: error.reason };
    throw error;
  }
  throw new Error("accepted");
};

describe("parseChatMessage: the platform fields", () => {
  it("reads userId, replyTo, thread, platform and channelName", () => {
    expect(
      parseChatMessage({
        ...base,
        user: "alice",
        userId: "U024BE7LH",
        replyTo: "m0",
        thread: "m0",
        platform: "slack",
        channelName: "general",
      }),
    ).toEqual({
      ...base,
      user: "alice",
      userId: "U024BE7LH",
      replyTo: "m0",
      thread: "m0",
      platform: "slack",
      channelName: "general",
    });
  });

  it("keeps integer ids as strings, and leaves absent or null fields unset", () => {
    expect(parseChatMessage({ ...base, userId: 42, replyTo: 7, thread: null })).toEqual({
      ...base,
      userId: "42",
      replyTo: "7",
    });
    expect(parseChatMessage({ ...base, userId: null, platform: null, channelName: null })).toEqual(
      base,
    );
  });

  it("ignores fields it does not know", () => {
    expect(parseChatMessage({ ...base, reactions: [{ name: "+1" }], edited: true })).toEqual(base);
  });

  it("names the field at fault", () => {
    expect(fault({ userId: "" }).field).toBe("userId");
    expect(fault({ userId: 1.5 }).field).toBe("userId");
    expect(fault({ replyTo: { id: "m0" } }).field).toBe("replyTo");
    expect(fault({ replyTo: "\ud800x" }).field).toBe("replyTo");
    expect(fault({ thread: "" }).field).toBe("thread");
    expect(fault({ thread: true }).field).toBe("thread");
    expect(fault({ platform: "Slack" }).field).toBe("platform");
    expect(fault({ platform: 3 }).field).toBe("platform");
    expect(fault({ channelName: "" }).field).toBe("channelName");
    expect(fault({ channelName: ["general"] }).field).toBe("channelName");
    expect(fault({ channelName: "gen\udc00" }).field).toBe("channelName");
  });

  it("reads guild and chatUsername of their platform's shape only, refusing any other", () => {
    expect(parseChatMessage({ ...base, guild: "900000000000000001" })).toEqual({
      ...base,
      guild: "900000000000000001",
    });
    expect(parseChatMessage({ ...base, chatUsername: "ubuntu_help", guild: null })).toEqual({
      ...base,
      chatUsername: "ubuntu_help",
    });
    // A snowflake as a JSON number has lost its last digits already: refused, not rounded.
    for (const guild of ["", "123", "9".repeat(22), "9/../evil", " 900000000000000001", 9e17]) {
      expect(fault({ guild }).field, String(guild)).toBe("guild");
    }
    for (const chatUsername of ["", "@ubuntu", "abc", "1ubuntu", "a/b/c", "x".repeat(33), 7]) {
      expect(fault({ chatUsername }).field, String(chatUsername)).toBe("chatUsername");
    }
    // Whatever a line says, what is kept is digits, or a letter and word characters: no link syntax.
    const kept = (field: "guild" | "chatUsername", value: string): string | undefined => {
      try {
        return parseChatMessage({ ...base, [field]: value })[field];
      } catch (error) {
        if (error instanceof InvalidMessageError) return undefined;
        throw error;
      }
    };
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^[\w/.@:-]{1,40}$/)), (value) => {
        const guild = kept("guild", value);
        const name = kept("chatUsername", value);
        expect(guild === undefined || /^\d{15,21}$/.test(guild)).toBe(true);
        expect(name === undefined || /^[A-Za-z]\w{3,31}$/.test(name)).toBe(true);
      }),
    );
  });

  it("ignores a reply to the message itself, as the segmenter does, never refusing it", () => {
    expect(parseChatMessage({ ...base, replyTo: "m1" }).replyTo).toBeUndefined();
    // A thread's root may name itself as its thread (Slack's thread_ts on the parent).
    expect(parseChatMessage({ ...base, thread: "m1" }).thread).toBe("m1");
  });

  it("takes the earliest other parent of a list, as the IRC annotations give them", () => {
    const line = { id: 1000, ts: "2005-07-06T14:00:00Z", user: "a", text: "x" };
    expect(parseChatMessage({ ...line, replyTo: [995, 993, 1000] }).replyTo).toBe("993");
    expect(parseChatMessage({ ...line, replyTo: [1000] }).replyTo).toBeUndefined();
    expect(parseChatMessage({ ...line, replyTo: [] }).replyTo).toBeUndefined();
    expect(parseChatMessage({ ...line, replyTo: ["m9", "m2"] }).replyTo).toBe("m9");
    expect(() => parseChatMessage({ ...line, replyTo: [993, {}] })).toThrow(/replyTo\[1\]/);
  });

  it("never quotes more than 40 characters of a value in a reason", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 50 }), (text) => {
        const { reason } = fault({ platform: text });
        expect(reason.length).toBeLessThan(140);
      }),
    );
  });
});

describe("toChatMessage", () => {
  const exported: ExportMessage = {
    id: "1700000000.000200",
    ts: "2023-11-14T22:13:20.000Z",
    channel: "C1",
    channelName: "general",
    user: "alice",
    text: "hi",
    userId: "U1",
    replyTo: "1700000000.000100",
    thread: "1700000000.000100",
    platform: "slack",
  };

  it("passes the platform fields through, as parseChatMessage reads the same line", () => {
    const chat = toChatMessage(exported);
    expect(chat).toMatchObject({
      userId: "U1",
      replyTo: "1700000000.000100",
      thread: "1700000000.000100",
      platform: "slack",
      channelName: "general",
    });
    expect(parseChatMessage(JSON.parse(JSON.stringify(exported)))).toEqual(chat);
  });

  it("leaves out what the export does not know", () => {
    const { userId: _u, replyTo: _r, thread: _t, platform: _p, ...bare } = exported;
    const chat = toChatMessage({ ...bare, channelName: "" });
    for (const field of ["userId", "replyTo", "thread", "platform", "channelName"]) {
      expect(chat).not.toHaveProperty(field);
    }
  });
});
