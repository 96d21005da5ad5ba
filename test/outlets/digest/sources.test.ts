import { storeDigestSources } from "convoseg/digest";
import { MemoryStore, textMessage } from "convoseg/history";
import { MemoryResultStore } from "convoseg/knowledge/store";
import fc from "fast-check";
import MarkdownIt from "markdown-it";
import { describe, expect, it } from "vitest";
import { markdownText, plainText, safeHref } from "../../../lib/outlets/digest/text.js";
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

  it("reads the links of the messages named only: platform and thread, deleted ones left out", async () => {
    const messages = new MemoryStore();
    const at = (id: string, fields: Record<string, string> = {}) =>
      textMessage("user", "text", { id, ts: SINCE, author: "ann", ...fields });
    await messages.write("C0HELP", [
      at("1.1", { platform: "slack" }),
      at("1.2", { platform: "slack", thread: "1.1" }),
      at("1.3", { platform: "slack" }),
      at("1.4"),
    ]);
    await messages.change("C0HELP", { kind: "delete", id: "1.3" });
    const asked: string[][] = [];
    const sources = storeDigestSources(new MemoryResultStore(), {
      getMessages: (channel, ids) => {
        asked.push([...ids]);
        return messages.getMessages(channel, ids);
      },
    });

    expect(await sources.links("C0HELP", [])).toEqual([]);
    expect(asked).toEqual([]);
    expect(await sources.links("C0HELP", ["1.2", "1.3", "1.4", "missing"])).toEqual([
      { id: "1.2", platform: "slack", thread: "1.1" },
      { id: "1.4" },
    ]);
    expect(asked).toEqual([["1.2", "1.3", "1.4", "missing"]]);
  });
});

describe("digest text", () => {
  const parser = new MarkdownIt({ html: true, linkify: true });
  const MARKUP = fc.constantFrom(
    ..."\\`*_{}[]()<>#+-.!|~&@:\"' 1)\n\t\u202e\u0000aw",
    "www.",
    "http://",
    "&amp;",
    "<!channel>",
    "1. ",
    "---",
  );
  const chatText = fc.oneof(
    fc.string({ unit: "binary", maxLength: 60 }),
    fc.array(MARKUP, { maxLength: 30 }).map((parts) => parts.join("")),
  );

  it("renders as exactly its plain text, wherever the digest puts it: no markup, link or mention", () => {
    fc.assert(
      fc.property(chatText, (text) => {
        const escaped = markdownText(text);
        expect(escaped).not.toMatch(/[\n\r\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
        expect([...escaped].some((c) => c.charCodeAt(0) < 0x20)).toBe(false);
        // A paragraph of it, a list item's text after ours, a table cell: the digest's places.
        for (const source of [
          escaped,
          `- **topic** ${escaped}`,
          `| a |\n| --- |\n| ${escaped} |`,
        ]) {
          const tokens = parser.parse(source, {}).filter((t) => t.type === "inline");
          const all = tokens.at(-1)?.children ?? [];
          // After our own `**topic**`, where there is one.
          const children = all.slice(all.findIndex((t) => t.type === "strong_close") + 1);
          expect(children.every((t) => t.type === "text" || t.type === "text_special")).toBe(true);
          const rendered = children.map((t) => t.content).join("");
          expect(rendered.replace(/^ /, "")).toBe(plainText(text).replace(/^ /, ""));
        }
      }),
      { numRuns: 500 },
    );
  });

  it("leaves ordinary punctuation as written", () => {
    expect(markdownText('docs.rs (2018) isn\'t "it" - ok')).toBe('docs.rs (2018) isn\'t "it" - ok');
    expect(markdownText("1. first")).toBe("1\\. first");
    expect(markdownText("see www.x.test or http://x.test, @here")).toBe(
      "see www\\.x.test or http\\://x.test, \\@here",
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
