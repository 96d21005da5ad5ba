import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { storeDigestSources } from "../../lib/digest/index.js";
import { markdownText, safeHref } from "../../lib/digest/text.js";
import { MemoryStore, textMessage } from "../../lib/history/index.js";
import { MemoryResultStore } from "../../lib/knowledge/index.js";
import { DAY, result, SINCE, support, UNTIL } from "./fixtures.js";

describe("storeDigestSources", () => {
  it("counts the period's messages of the results that meet it, read by id, deleted ones left out", async () => {
    const results = new MemoryResultStore();
    const messages = new MemoryStore();
    const talks = [
      { id: "before", ts: SINCE - 2 * DAY },
      { id: "across", ts: SINCE - 60_000 },
      { id: "within", ts: SINCE + DAY },
      { id: "after", ts: UNTIL + DAY },
    ];
    for (const talk of talks) {
      await messages.write(
        "help",
        [0, 1].map((i) =>
          textMessage("user", "text", {
            id: `${talk.id}-m${i}`,
            ts: talk.ts + i * 60_000,
            author: `p${i}`,
          }),
        ),
      );
      const lease = { owner: "t", now: 0, leaseMs: 60_000, expiresAt: 2_000_000_000 };
      await results.acquireLease("help", talk.id, lease);
      await results.saveResult(
        result("help", talk.id, talk.ts, talk.ts + 60_000),
        [support("help", talk.id, "grub", talk.ts)],
        undefined,
        "t",
      );
    }
    await messages.change("help", { kind: "delete", id: "within-m1" });
    const asked: string[][] = [];
    const sources = storeDigestSources(results, {
      getMessages: (channel, ids) => {
        asked.push([...ids]);
        return messages.getMessages(channel, ids);
      },
    });

    const activity = await sources.activity("help", SINCE, UNTIL);

    expect(activity.sort((a, b) => a.ts - b.ts)).toEqual([
      { ts: SINCE, author: "p1", segmentId: "across" },
      { ts: SINCE + DAY, author: "p0", segmentId: "within" },
    ]);
    // Only the results that meet the period had their messages read.
    expect(asked.flat().sort()).toEqual(["across-m0", "across-m1", "within-m0", "within-m1"]);
    expect((await sources.supports("help")).map((s) => s.segmentId).sort()).toEqual([
      "across",
      "after",
      "before",
      "within",
    ]);
  });
});

describe("digest text", () => {
  it("leaves no Markdown-significant character of chat text unescaped, and no line break or control", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 60 }), (text) => {
        const escaped = markdownText(text);
        const bare = escaped.replace(/\\./g, "");
        expect(bare).not.toMatch(/[\\`*_{}[\]()<>#+\-.!|~&@:"']/);
        expect(escaped).not.toMatch(/[\n\r\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
        expect([...escaped].some((c) => c.charCodeAt(0) < 0x20)).toBe(false);
      }),
    );
  });

  it("keeps relative and http(s) links, encoded; drops any other scheme", () => {
    expect(safeHref("report.html#segment=a/b")).toBe("report.html#segment=a/b");
    expect(safeHref("https://x.test/r.html#segment=a b(c)")).toBe(
      "https://x.test/r.html#segment=a%20b%28c%29",
    );
    for (const bad of ["javascript:alert(1)", "JAVASCRIPT:x", "data:text/html,x", "vbscript:x"]) {
      expect(safeHref(bad)).toBeUndefined();
    }
  });
});
