/**
 * The digest's recurring questions: FAQ entries of a channel's questions asked at least twice in
 * all and at least once in the period, bounded per channel, linked by their latest asking there,
 * and listed with chat text escaped in every form.
 */
import {
  buildDigest,
  DIGEST_LIMITS,
  type Digest,
  digestHtml,
  digestJson,
  digestMarkdown,
  digestText,
  slackDigestPayload,
} from "convoseg/digest";
import type { StoredQuestion } from "convoseg/knowledge/store";
import { describe, expect, it } from "vitest";
import { DAY, memorySources, question, result, SINCE, UNTIL } from "./fixtures.js";

const HOSTILE = "<script>x</script> **b** [l](javascript:y) @here <!channel> \u001b[2J\u202eevil";
const period = { since: SINCE, until: UNTIL, now: new Date(UNTIL) };

/** `question` of `id` with its asking message `askedId` and an optional thread. */
const asked = (
  id: string,
  ts: number,
  text: string,
  answer?: string,
  extra: Partial<StoredQuestion> = {},
): StoredQuestion => ({
  ...question(id, ts, answer === undefined ? "unanswered" : "answered", text, answer),
  ...extra,
});

describe("the digest's recurring questions", () => {
  it("lists a question asked twice in all and once in the period, linked by its latest asking in the period", async () => {
    const digest = await buildDigest(
      memorySources({
        results: [
          result("help", "s0", SINCE - 9 * DAY, SINCE - 9 * DAY + 1, [
            asked("a1", SINCE - 9 * DAY, "how do I install nvidia drivers?", "use ubuntu-drivers", {
              askedBy: "ana",
            }),
            // Recurring, but not in the period: left out.
            asked("b1", SINCE - 8 * DAY, "why is my wifi so slow?", undefined, { askedBy: "bo" }),
            asked("b2", SINCE - 7 * DAY, "why is my wifi so slow?", undefined, { askedBy: "cy" }),
          ]),
          result("help", "s1", SINCE + DAY, SINCE + DAY + 1, [
            asked("a2", SINCE + DAY, "how to install nvidia drivers", undefined, { askedBy: "bo" }),
            // Asked once: no recurring question.
            asked("c1", SINCE + DAY + 5, "where is the grub config?", undefined, { askedBy: "cy" }),
            // Asked twice by one person: no recurring question either.
            asked("d1", SINCE + DAY + 6, "how do I mount my usb stick?", undefined, {
              askedBy: "cy",
            }),
          ]),
          result("help", "s2", SINCE + 2 * DAY, SINCE + 2 * DAY + 1, [
            asked("a3", SINCE + 2 * DAY, "how do I install nvidia drivers?", undefined, {
              askedBy: "ana",
            }),
            asked("d2", SINCE + 2 * DAY + 1, "how to mount a usb stick", undefined, {
              askedBy: "cy",
            }),
          ]),
        ].map((r, i) => (i === 2 ? { ...r, thread: "t2" } : r)),
      }),
      { channels: ["help"], ...period },
    );

    expect(digest.faq).toEqual([
      {
        channel: "help",
        // Its clearest wording: of the commonest form, the shortest worded as a question.
        question: "how to install nvidia drivers",
        count: 3,
        // ana asked twice.
        people: 2,
        inPeriod: 2,
        answered: 1,
        firstAsked: SINCE - 9 * DAY,
        lastAsked: SINCE + 2 * DAY,
        answer: {
          text: "use ubuntu-drivers",
          askedId: "a1-ask",
          answerIds: ["a1-answer"],
          corrected: false,
        },
        segmentId: "s2",
        askedId: "a3-ask",
        askedTs: SINCE + 2 * DAY,
        thread: "t2",
      },
    ]);
    expect(digest.omitted).toBeUndefined();
    expect(JSON.parse(digestJson(digest))).toEqual(digest);
    expect(digestMarkdown(digest, { reportHref: href })).toContain(
      "- **how to install nvidia drivers** in help: asked 3 times by 2 people since 2025-12-27, 2 in the period; latest [2026-01-07 00:00](report.html#segment=help/s2)",
    );
  });

  it("has none when nothing recurs in the period, and says so in no form", async () => {
    const digest = await buildDigest(
      memorySources({
        results: [
          result("help", "s1", SINCE + DAY, SINCE + DAY + 1, [
            asked("c1", SINCE + DAY, "where is the grub config?"),
          ]),
        ],
      }),
      { channels: ["help"], ...period },
    );
    expect(digest).not.toHaveProperty("faq");
    expect(digestText(digest)).not.toContain("Recurring questions");
    expect(digestMarkdown(digest)).not.toContain("Recurring questions");
    expect(digestHtml(digest)).not.toContain("Recurring questions");
    expect(JSON.stringify(slackDigestPayload(digest))).not.toContain("Recurring questions");
  });

  it("lists at most DIGEST_LIMITS.faq per channel, each channel's most asked first, and counts the rest", async () => {
    const topics = ["grub", "nvidia", "wifi", "printer", "bluetooth", "kernel", "samba"];
    const questions = (channel: string) =>
      topics.flatMap((t, i) =>
        Array.from({ length: i + 2 }, (_, k) =>
          asked(`${channel}-${t}-${k}`, SINCE + DAY + k, `how do I configure ${t}?`),
        ),
      );
    const digest = await buildDigest(
      memorySources({
        results: [
          result("help", "s1", SINCE + DAY, SINCE + 2 * DAY, questions("help")),
          result("dev", "s9", SINCE + DAY, SINCE + 2 * DAY, questions("dev").slice(0, 5)),
        ],
      }),
      { channels: ["help", "dev"], ...period },
    );
    const help = (digest.faq ?? []).filter((f) => f.channel === "help");
    expect(help.map((f) => f.count)).toEqual([8, 7, 6, 5, 4]);
    expect(help).toHaveLength(DIGEST_LIMITS.faq);
    expect((digest.faq ?? []).map((f) => f.channel)).toEqual([
      ...Array(5).fill("help"),
      "dev",
      "dev",
    ]);
    expect(digest.omitted).toEqual({
      topics: 0,
      unanswered: 0,
      unclear: 0,
      answered: 0,
      faq: topics.length - DIGEST_LIMITS.faq,
    });
    expect(digestMarkdown(digest)).toContain("…and 2 more recurring questions.");
    expect(digestHtml(digest)).toContain("…and 2 more recurring questions.");
    expect(digestText(digest)).toContain("  …and 2 more.");
  });

  it("links a Slack workspace's entry to its asking message", async () => {
    const C = "C0HELP";
    const digest = await buildDigest(
      memorySources({
        results: [
          result(C, "s1", SINCE + DAY, SINCE + DAY + 1, [
            asked("x", SINCE + DAY, "how do I mount a disk?", undefined, {
              askedId: "1736100000.000100",
            }),
            asked("y", SINCE + DAY + 9, "how do I mount a disk?", undefined, {
              askedId: "1736100000.000900",
            }),
          ]),
        ],
        links: [{ id: "1736100000.000900", channel: C, platform: "slack" }],
      }),
      { channels: [C], ...period },
    );
    const link = `https://slack.com/archives/${C}/p1736100000000900`;
    expect(digest.faq?.map((f) => f.permalink)).toEqual([link]);
    expect(digestText(digest)).toContain(`<${link}>`);
    expect(digestMarkdown(digest)).toContain(`[open in Slack](${link})`);
    expect(digestHtml(digest)).toContain(`<a href="${link}">open in Slack</a>`);
    expect(JSON.stringify(slackDigestPayload(digest))).toContain(`<${link}|open in Slack>`);
  });
});

/** A digest with one recurring question of hostile wording and answer, corrected. */
const hostile: Digest = {
  v: 1,
  channels: ["help"],
  since: SINCE,
  until: UNTIL,
  generatedAt: new Date(UNTIL).toISOString(),
  topics: [],
  unanswered: [],
  unclear: [],
  answered: [],
  activity: [],
  faq: [
    {
      channel: "help",
      question: `how ${HOSTILE}?`,
      count: 4,
      people: 3,
      inPeriod: 1,
      answered: 2,
      firstAsked: SINCE - 3 * DAY,
      lastAsked: SINCE + DAY,
      answer: { text: `do ${HOSTILE}`, askedId: "a", answerIds: ["b"], corrected: true },
      segmentId: "s 1",
      askedId: "m1",
      askedTs: SINCE + DAY,
    },
    {
      channel: "help",
      question: "why does it hang?",
      count: 2,
      people: 2,
      inPeriod: 2,
      answered: 0,
      firstAsked: SINCE + DAY,
      lastAsked: SINCE + 2 * DAY,
      segmentId: "s2",
      askedId: "m2",
      askedTs: SINCE + 2 * DAY,
      permalink: "javascript:alert(1)",
    },
  ],
};

const unprintable = (s: string) => [...s].filter((c) => c === "\u001b" || c === "\u202e");

const href = (e: { channel: string; segmentId: string }) =>
  `report.html#segment=${encodeURIComponent(e.channel)}/${encodeURIComponent(e.segmentId)}`;

describe("the recurring questions in every form", () => {
  it("Markdown: its wording, how often, the latest asking linked to its segment, the answer; chat text escaped", () => {
    const md = digestMarkdown(hostile, { reportHref: href });
    expect(md).toContain("## Recurring questions");
    expect(md).toContain(
      "in help: asked 4 times by 3 people since 2026-01-02, 1 in the period; latest [2026-01-06 00:00](report.html#segment=help/s%201)",
    );
    expect(md).toContain(
      "- **why does it hang?** in help: asked 2 times by 2 people since 2026-01-06; latest",
    );
    expect(md).toContain("  - answer (corrected): do \\<script\\>");
    expect(md).not.toMatch(/<script>|\[l\]\(javascript/);
    expect(unprintable(md)).toEqual([]);
    expect(md).not.toContain("open in Slack");
    expect(digestMarkdown(hostile)).toContain("latest 2026-01-07 00:00 (segment s2)");
  });

  it("HTML, text and Slack: the same entries, escaped as each form needs", () => {
    const html = digestHtml(hostile, { reportHref: href });
    expect(html).toContain("<h2>Recurring questions</h2>");
    expect(html).toContain('<ul class="faq">');
    expect(html).toContain('<div class="answer">answer (corrected): do &lt;script&gt;');
    expect(html).toContain('<a href="report.html#segment=help/s%201" title="segment s 1">');
    expect(html).not.toMatch(/<script>|href="javascript/);
    expect(unprintable(html)).toEqual([]);

    const text = digestText(hostile);
    expect(text).toContain("\nRecurring questions\n");
    expect(text).toContain("latest 2026-01-06 00:00 (segment s 1)");
    expect(text).toContain("    answer (corrected): do <script>x</script>");
    expect(unprintable(text)).toEqual([]);

    const slack = JSON.stringify(slackDigestPayload(hostile));
    expect(slack).toContain("*Recurring questions*");
    expect(slack).toContain("asked 4 times by 3 people since 2026-01-02, 1 in the period");
    expect(slack).not.toMatch(/<script>|<!channel>|\|open in Slack/);
  });
});
