/** The poller's pure parts: snowflakes, the message mapping, the cursors and the rate limits. */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  chatMessage,
  compareSnowflakes,
  DiscordConfigError,
  type DiscordMessage,
  MemoryCursorStore,
  snowflakeFromTime,
  timeOfSnowflake,
} from "convoseg/connectors/discord";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeRecent, encodeRecent } from "../../../../lib/intake/connectors/discord/cursors.js";
import { RateLimits } from "../../../../lib/intake/connectors/discord/rate-limits.js";
import { byId, fixture, readAll } from "../../exports/support.js";

describe("snowflakes", () => {
  it("are made from a time as (ms − 1420070400000) << 22 and read back", () => {
    expect(snowflakeFromTime(1_420_070_400_000 + 1)).toBe(String(1 << 22));
    fc.assert(
      fc.property(fc.integer({ min: 1_420_070_400_000, max: 4_000_000_000_000 }), (ms) => {
        expect(timeOfSnowflake(snowflakeFromTime(ms))).toBe(ms);
      }),
    );
  });

  it("refuse a backfill date before Discord's epoch, naming the setting", () => {
    expect(() => snowflakeFromTime(0)).toThrow(DiscordConfigError);
    expect(() => snowflakeFromTime(0)).toThrow(/backfillFrom/);
  });

  it("compare as numbers, beyond a double's precision", () => {
    expect(compareSnowflakes("9", "10")).toBe(-1);
    expect(compareSnowflakes("1457705189376000001", "1457705189376000000")).toBe(1);
  });
});

describe("chatMessage", () => {
  const base = {
    id: "200",
    timestamp: "2026-01-05T12:00:00.000+00:00",
    author: { id: "42", username: "ada", global_name: "Ada L" },
  };

  it("maps author, text with mentions and attachments, reply and platform", () => {
    const line = chatMessage(
      {
        ...base,
        type: 19,
        content: "hi <@7> see <#9>",
        mentions: [{ id: "7", username: "bob" }],
        attachments: [{ filename: "log.txt" }],
        message_reference: { message_id: "150", channel_id: "100" },
        channel_id: "100",
      },
      { channel: "100", channelName: "general" },
    );
    expect(line).toEqual({
      id: "200",
      ts: base.timestamp,
      channel: "100",
      channelName: "general",
      user: "Ada L",
      userId: "42",
      text: "hi @bob see #9\n[attachment: log.txt]",
      kind: "user",
      replyTo: "150",
      platform: "discord",
    });
  });

  it("carries the channel's guild for the message's link, only a snowflake", () => {
    const guild = "900000000000000001";
    expect(chatMessage(base, { channel: "100", guild })?.guild).toBe(guild);
    // A direct message's channel has no guild; one not of a snowflake's shape is left out,
    // never refusing the message.
    expect(chatMessage(base, { channel: "100" })).not.toHaveProperty("guild");
    for (const bad of ["1", "x/../evil", `${guild} `]) {
      expect(chatMessage(base, { channel: "100", guild: bad })).not.toHaveProperty("guild");
    }
  });

  it("marks bots, webhooks and system types; leaves a forward unlinked; skips a thread starter", () => {
    const to = { channel: "100" };
    expect(chatMessage({ ...base, author: { id: "1", username: "b", bot: true } }, to)?.kind).toBe(
      "bot",
    );
    expect(chatMessage({ ...base, webhook_id: "5" }, to)?.kind).toBe("bot");
    expect(chatMessage({ ...base, type: 7 }, to)).toMatchObject({ kind: "system", user: null });
    const forward = chatMessage({ ...base, message_reference: { type: 1, message_id: "3" } }, to);
    expect(forward?.replyTo).toBeUndefined();
    expect(chatMessage({ ...base, type: 21 }, { channel: "100", thread: "150" })).toBeUndefined();
    expect(chatMessage(base, { channel: "100", thread: "150" })?.thread).toBe("150");
    expect(chatMessage({ ...base, id: "150" }, { channel: "100", thread: "150" })?.thread).toBe(
      undefined,
    );
  });
});

/** Discord API message objects by case (test/intake/connectors/fixtures/discord). */
const MESSAGES = JSON.parse(
  readFileSync(join(import.meta.dirname, "..", "fixtures", "discord", "messages.json"), "utf8"),
) as Record<string, DiscordMessage>;
const ALERTS = { channel: "920000000000000001", channelName: "alerts" };

describe("chatMessage: forwards and embeds", () => {
  it("reads a forward's message_snapshots as [forwarded] text, linked to nothing", () => {
    const line = chatMessage(MESSAGES.forward, ALERTS);
    expect(line).toMatchObject({
      user: "Ana",
      kind: "user",
      text: "[forwarded] The deploy is at 14:00, @Bob owns it\n[attachment: plan.pdf]",
    });
    expect(line?.replyTo).toBeUndefined();
  });

  it("reads a bot's and a webhook's embed-only message as the embeds' title, description and fields", () => {
    expect(chatMessage(MESSAGES.bot_embed, ALERTS)).toMatchObject({
      kind: "bot",
      text: "Build #812 failed\nmain: 3 tests failed in `ingest`\nBranch: main\nCommit: a1b2c3d",
    });
    expect(chatMessage(MESSAGES.webhook_embed, ALERTS)?.text).toBe(
      "[acme/api] 1 new commit\n[`a1b2c3d`](https://github.com/acme/api/commit/a1b2c3d) Retry failed uploads - ana",
    );
    expect(chatMessage(MESSAGES.link_preview, ALERTS)?.text).toBe(
      "see https://example.com/runbook",
    );
  });

  it("gives each message the text the DiscordChatExporter reader gives the same one", async () => {
    const { messages } = await readAll([fixture("discord", "forwards-and-embeds.json")]);
    for (const [name, message] of Object.entries(MESSAGES)) {
      expect([name, chatMessage(message, ALERTS)?.text]).toEqual([
        name,
        byId(messages, message.id).text,
      ]);
    }
  });

  it("bounds what embeds and a forward add, cut on a whole character, with no control character from a title", () => {
    const huge = "😀".repeat(4096);
    const embeds = Array.from({ length: 10 }, (_, i) => ({
      type: "rich",
      title: `Alert\n\u001b[2J${i}`,
      description: huge,
      fields: Array.from({ length: 25 }, () => ({ name: "k\u0000", value: huge })),
    }));
    const text = chatMessage({ ...MESSAGES.bot_embed, embeds }, ALERTS)?.text ?? "";
    expect(text.startsWith("Alert [2J0\n")).toBe(true);
    expect([...text].length).toBeLessThanOrEqual(4000);
    expect(text.isWellFormed()).toBe(true);
    expect(text.endsWith("…")).toBe(true);
    const forward = chatMessage(
      {
        ...MESSAGES.forward,
        message_snapshots: [{ message: { content: huge.repeat(2), embeds } }],
      },
      ALERTS,
    );
    expect([...(forward?.text ?? "")].length).toBeLessThanOrEqual(4000);
    expect((forward?.text ?? "").isWellFormed()).toBe(true);
  });
});

describe("MemoryCursorStore", () => {
  it("only ever moves a cursor forward, whatever the order of advances", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.bigInt({ min: 1n, max: 2n ** 63n }), { minLength: 1 }),
        async (xs) => {
          const store = new MemoryCursorStore();
          let highest = 0n;
          for (const x of xs) {
            const moved = await store.advance("c", x.toString());
            expect(moved).toBe(x > highest);
            if (x > highest) highest = x;
            expect(store.items.get("c")?.cursor).toBe(highest.toString());
          }
        },
      ),
    );
  });
});

describe("RateLimits", () => {
  const clock = () => {
    let t = 0;
    return {
      now: () => t,
      sleep: async (ms: number) => {
        t += ms;
      },
    };
  };

  it("keeps the global cap over a sliding window", () => {
    const c = clock();
    const limits = new RateLimits(c, 3);
    for (let i = 0; i < 3; i++) {
      expect(limits.waitFor("r", "1")).toBe(0);
      limits.started("r", "1");
    }
    expect(limits.waitFor("r", "2")).toBeGreaterThanOrEqual(1000);
  });

  it("waits for an exhausted bucket's reset, per major parameter, and a 429's retry_after", () => {
    const c = clock();
    const limits = new RateLimits(c, 50);
    const headers = new Headers({
      "x-ratelimit-bucket": "abc",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset-after": "2.5",
    });
    limits.observe("/channels/{id}/messages", "1", headers);
    expect(limits.waitFor("/channels/{id}/messages", "1")).toBe(2500);
    expect(limits.waitFor("/channels/{id}/messages", "2")).toBe(0);
    limits.limited("/channels/{id}/messages", "2", 1200, false);
    expect(limits.waitFor("/channels/{id}/messages", "2")).toBe(1200);
    limits.limited("/x", "9", 700, true);
    expect(limits.waitFor("/y", "3")).toBe(700);
  });
});

describe("the recent ids' encoding", () => {
  it("reads back what it wrote, in order, sorted or not", () => {
    fc.assert(
      fc.property(fc.array(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })), (values) => {
        const ids = values.map(String);
        expect(decodeRecent(encodeRecent(ids))).toEqual(ids);
      }),
    );
  });
});
