import { MemoryStore } from "convoseg/history";
import { channelPlatform, isPrivateChat, PLATFORM_CHANNEL_SHAPES } from "convoseg/identity";
import {
  ingest,
  inScope,
  type ProducerGrant,
  parseChannelScope,
  parseProducerGrants,
} from "convoseg/ingest";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const T = Date.UTC(2025, 2, 3, 8);

describe("channel scopes", () => {
  it("reads ids, prefixes and * from a setting", () => {
    expect(parseChannelScope("help, team-*")).toEqual({ ids: ["help"], prefixes: ["team-"] });
    expect(parseChannelScope("*")).toEqual({ prefixes: [""] });
    expect(() => parseChannelScope(" , ")).toThrow("got nothing");
    expect(() => parseChannelScope("te*am")).toThrow('a * may only end an entry (got "te*am")');
  });

  it("holds each platform's connector to its own channel ids", () => {
    const cases = {
      slack: ["C0123ABCD", "G0AB12", "D024BE91L"],
      telegram: ["-1001234567890", "-4012345", "123456789"],
      discord: ["1234567890123456789", "81384788765712384"],
    };
    for (const [platform, ids] of Object.entries(cases)) {
      for (const id of ids) {
        const owners = Object.entries(PLATFORM_CHANNEL_SHAPES)
          .filter(([, shape]) => shape.test(id))
          .map(([name]) => name);
        expect(owners, id).toEqual([platform]);
      }
    }
    expect(channelPlatform("C0123ABCD")).toBe("slack");
    expect(channelPlatform("general")).toBeUndefined();
    expect(["D024BE91L", "123456789"].map(isPrivateChat)).toEqual([true, true]);
    expect(["C0123ABCD", "-1001234567890", "81384788765712384"].map(isPrivateChat)).toEqual([
      false,
      false,
      false,
    ]);
    for (const id of ["general", "slack-C0123", "c0123abc", "-1001234567890123456", ""]) {
      expect(inScope({ platform: "slack" }, id) || inScope({ platform: "telegram" }, id)).toBe(
        false,
      );
    }
  });

  it("is in scope exactly when an id equals, a prefix starts, or the shape matches", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }),
        fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 }),
        fc.string({ maxLength: 6 }),
        (ids, prefixes, channel) => {
          const expected = ids.includes(channel) || prefixes.some((p) => channel.startsWith(p));
          expect(inScope({ ids, prefixes }, channel)).toBe(expected);
        },
      ),
    );
  });
});

describe("producer grants", () => {
  const arn = "arn:aws:sqs:eu-west-1:123456789012:slack";

  it("reads the stack's PRODUCERS list", () => {
    const grants = parseProducerGrants(
      JSON.stringify([
        { queue: arn, name: "slack", channels: { platform: "slack" }, changes: true },
        { queue: `${arn}-2`, name: "queue", channels: { prefixes: [""] }, changes: false },
      ]),
    );
    expect(grants.get(arn)).toEqual({
      name: "slack",
      channels: { platform: "slack" },
      changes: true,
    });
    expect(grants.get(`${arn}-2`)?.changes).toBe(false);
  });

  it.each([
    ["{}", "expected a JSON list of producer grants"],
    ["[", "expected a JSON list of producer grants"],
    ['[{"queue":"q"}]', "producer grant [0]: queue must be a queue ARN"],
    [`[{"queue":"${arn}","name":"","changes":true}]`, "[0]: name must be a non-empty string"],
    [`[{"queue":"${arn}","name":"a","changes":1}]`, "[0]: changes must be true or false"],
    [`[{"queue":"${arn}","name":"a","changes":true}]`, "[0]: channels must be an object"],
    [
      `[{"queue":"${arn}","name":"a","changes":true,"channels":{"ids":[1]}}]`,
      "[0]: channels.ids must be a list of strings",
    ],
    [
      `[{"queue":"${arn}","name":"a","changes":true,"channels":{"platform":"irc"}}]`,
      "[0]: channels.platform must be one of slack, telegram, discord",
    ],
    [
      `[{"queue":"${arn}","name":"a","changes":true,"channels":{}},{"queue":"${arn}","name":"b","changes":true,"channels":{}}]`,
      "[1]: queue names a queue granted before",
    ],
  ])("refuses %s, naming the entry and field", (json, message) => {
    expect(() => parseProducerGrants(json)).toThrow(message);
  });
});

describe("ingest within a grant", () => {
  const addOnly: ProducerGrant = {
    name: "bot",
    channels: { prefixes: ["team-"] },
    changes: false,
  };

  it("refuses lines to other channels and changes without the right, applying the rest", async () => {
    const store = new MemoryStore();
    await ingest(store, [{ id: "1", ts: T, channel: "help", text: "their words" }]);
    const result = await ingest(
      store,
      [
        { id: "2", ts: T, channel: "team-a", text: "ours" },
        { id: "3", ts: T, channel: "help", text: "injected" },
        { op: "edit", id: "1", channel: "help", text: "rewritten", editedAt: T + 1 },
        { op: "delete", id: "1", channel: "help" },
        { op: "delete", id: "2", channel: "team-a" },
        { id: "4", ts: T, text: "to the default channel" },
        { id: "5", ts: "never", channel: "team-a" },
      ],
      { grant: addOnly },
    );
    expect(result.stored).toEqual([0]);
    expect(result.refused).toEqual([
      { index: 1, reason: "channel" },
      { index: 2, reason: "channel" },
      { index: 3, reason: "channel" },
      { index: 4, reason: "changes" },
      { index: 5, reason: "channel" },
    ]);
    // Invalid lines are rejected as before, whoever sent them.
    expect(result.rejected.map((r) => r.index)).toEqual([6]);
    expect(result.changes).toEqual([]);
    expect((await store.read("help")).map((m) => [m.id, m.parts[0]])).toEqual([
      ["1", { type: "text", text: "their words" }],
    ]);
    expect((await store.read("team-a")).map((m) => m.id)).toEqual(["2"]);
  });

  it("applies changes within the channels of a producer that may send them", async () => {
    const store = new MemoryStore();
    const grant: ProducerGrant = { ...addOnly, changes: true };
    await ingest(store, [{ id: "2", ts: T, channel: "team-a", text: "ours" }], { grant });
    const result = await ingest(store, [{ op: "delete", id: "2", channel: "team-a" }], { grant });
    expect(result.changes).toEqual([{ index: 0, op: "delete", status: "applied" }]);
    expect(result.refused).toEqual([]);
  });
});
