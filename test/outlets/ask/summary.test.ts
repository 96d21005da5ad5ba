import { type AskAnswer, discordAnswer, slackAnswer, telegramAnswer } from "convoseg/ask";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { validSentences } from "../../../lib/outlets/ask/summary.js";

const answer: AskAnswer = {
  words: "repair grub",
  items: [
    { kind: "question", title: "How do I repair grub?", answer: "grub-install", link: "", ts: 0 },
    { kind: "conversation", title: "grub", link: "", ts: 0 },
  ],
  summary: [
    { text: "@everyone <@123> **Run** `grub-install` [x](https://evil.example)", hits: [1] },
    { text: "<b>bold</b> & <a href=x>", hits: [1, 2] },
  ],
};

describe("validSentences", () => {
  it("keeps at most three sentences, each citing only hits offered, no number left in its text", () => {
    const reply = fc.record({
      sentences: fc.array(
        fc.record({
          text: fc.oneof(
            fc.string({ maxLength: 400 }),
            fc
              .tuple(fc.string({ maxLength: 40 }), fc.integer({ min: 0, max: 12 }))
              .map(([t, n]) => `${t} [${n}]`),
          ),
          hits: fc.array(fc.integer({ min: -2, max: 12 }), { maxLength: 4 }),
        }),
        { maxLength: 8 },
      ),
    });
    fc.assert(
      fc.property(fc.oneof(reply, fc.anything()), fc.integer({ min: 1, max: 10 }), (r, n) => {
        const kept = validSentences(r, n);
        expect(kept.length).toBeLessThanOrEqual(3);
        for (const sentence of kept) {
          expect(sentence.hits.length).toBeGreaterThan(0);
          for (const hit of sentence.hits) expect(hit >= 1 && hit <= n).toBe(true);
          expect(sentence.text).not.toMatch(/\[\s*\d+\s*\]/);
          expect(sentence.text.trim()).not.toBe("");
          expect([...sentence.text].length).toBeLessThanOrEqual(300);
        }
      }),
    );
  });

  it("drops a sentence citing a hit not offered, in its hits or in its text", () => {
    const reply = {
      sentences: [
        { text: "One [1].", hits: [] },
        { text: "Two.", hits: [2, 3] },
        { text: "Three [1, 4].", hits: [2] },
        { text: "Four.", hits: [] },
        { text: "Five.", hits: [2, 1, 2] },
      ],
    };
    expect(validSentences(reply, 2)).toEqual([
      { text: "One.", hits: [1] },
      { text: "Five.", hits: [1, 2] },
    ]);
    expect(validSentences({ sentences: "no" }, 2)).toEqual([]);
  });
});

describe("a summary as each platform shows it", () => {
  it("Discord: Markdown escaped, no mention parsed, hits numbered as cited", () => {
    const message = discordAnswer(answer);
    const lines = message.content.split("\n");
    expect(lines[1]).toBe(
      "@\u2060everyone \\<@\u2060123\\> \\*\\*Run\\*\\* \\`grub\\-install\\` \\[x\\]\\(https\\://evil.example\\) [1]",
    );
    expect(lines[5]).toMatch(/^- \[1\] \*\*Q:\*\* How do I repair grub\?/);
    expect(message.allowed_mentions).toEqual({ parse: [] });
  });

  it("Discord: the list alone when the summary would pass the message's limit", () => {
    const long = "a".repeat(290);
    const items = Array.from({ length: 10 }, () => ({
      kind: "message" as const,
      title: "_".repeat(200),
      link: "",
      ts: 0,
    }));
    const message = discordAnswer({
      words: "x",
      items,
      summary: [1, 2, 3].map((n) => ({ text: long, hits: [n] })),
    });
    expect(message.content).not.toContain("Summary");
    expect(message.content.startsWith("From this channel's history")).toBe(true);
  });

  it("Telegram: plain text, no parse mode; Slack: entities for its markup", () => {
    const telegram = telegramAnswer(answer, -100123);
    expect(telegram.text.split("\n")[2]).toBe("<b>bold</b> & <a href=x> [1][2]");
    expect(telegram).not.toHaveProperty("parse_mode");
    const slack = slackAnswer(answer).text.split("\n");
    expect(slack[2]).toBe("&lt;b&gt;bold&lt;/b&gt; &amp; &lt;a href=x&gt; [1][2]");
    expect(slack[1]).toMatch(/^@\u2060everyone &lt;@123&gt; \u2217\u2217Run/);
  });
});
