import {
  buildDigest,
  type Digest,
  digestHtml,
  digestJson,
  digestMarkdown,
  digestText,
} from "convoseg/digest";
import { describe, expect, it } from "vitest";
import { DAY, memorySources, question, result, SINCE, support, UNTIL } from "./fixtures.js";

const HOSTILE =
  "<script>alert(1)</script> **bold** [x](javascript:alert(1)) @here <!channel> \u001b[2J\u202eevil";

async function hostileDigest(): Promise<Digest> {
  return buildDigest(
    memorySources({
      supports: [
        support("help", "s0", "grub bootloader", SINCE - 3 * DAY),
        support("help", "s1", "grub bootloader", SINCE + DAY),
        support("help", "s2", HOSTILE, SINCE + 2 * DAY),
      ],
      results: [
        result("help", "s1", SINCE + DAY, SINCE + DAY + 1, [
          question("q1", SINCE + DAY, "unanswered", `why ${HOSTILE}?`),
          question("q2", SINCE + DAY + 5, "answered", "how to fix?", `answer ${HOSTILE}`),
        ]),
      ],
      messages: [
        { channel: "help", ts: SINCE + DAY, author: "ann", segmentId: "s1" },
        { channel: "help", ts: SINCE + DAY + 5, author: "bob", segmentId: "s1" },
        { channel: "help", ts: SINCE + 2 * DAY, author: "ann", segmentId: "s2" },
      ],
    }),
    { channels: ["help"], since: SINCE, until: UNTIL, now: new Date(UNTIL) },
  );
}

const href = (e: { channel: string; segmentId: string }) =>
  `report.html#segment=${encodeURIComponent(e.channel)}/${encodeURIComponent(e.segmentId)}`;

describe("digest renderers", () => {
  it("Markdown: sections in order, a link per entry to its segment, chat text escaped and stripped", async () => {
    const md = digestMarkdown(await hostileDigest(), { reportHref: href });

    const headings = md.split("\n").filter((l) => l.startsWith("#"));
    expect(headings).toEqual([
      "# Digest: help",
      "## Activity",
      "## New topics",
      "## Recurring topics",
      "## Community health",
      "## Unanswered (1), oldest first",
      "## Unclear (0): whether an answer came is not clear",
      "## Answered (1)",
    ]);
    expect(md).toContain("| help | 3 | 2 | 2 | 2026-01-06 (2) |");
    expect(md).toContain("](report.html#segment=help/s1)");
    expect(md).toContain("](report.html#segment=help/s2)");
    expect(md).toContain("1 earlier conversation since 2026-01-02");
    // Nothing of the chat text is markup, a mention, a control or a reversal.
    const unescaped = md.replace(/\\./g, "");
    expect(unescaped).not.toMatch(/<|\*\*bold|\[x\]|@here/);
    expect([...md].filter((c) => c === "\u001b" || c === "\u202e")).toEqual([]);
    expect(md).toContain("\\<script\\>alert(1)\\</script\\>");
    expect(md).toContain("answer: answer \\<script");
  });

  it("Markdown without reportHref names segments without links; a non-http link is dropped", async () => {
    const digest = await hostileDigest();
    // What is left once every escaped character is taken out: no link of ours, nor of the chat's.
    const bare = (md: string) => md.replace(/\\./g, "");
    expect(bare(digestMarkdown(digest))).not.toMatch(/\]\(/);
    expect(digestMarkdown(digest)).toContain("2026-01-06 00:00 (segment s1)");
    expect(bare(digestMarkdown(digest, { reportHref: () => "javascript:alert(1)" }))).not.toMatch(
      /\]\(/,
    );
  });

  it("HTML: a standalone page with no script, every chat string escaped, a bar per day", async () => {
    const html = digestHtml(await hostileDigest(), { reportHref: href });

    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'"`);
    expect(html).not.toMatch(/<script|href="javascript|<!channel/);
    expect([...html].filter((c) => c === "\u001b" || c === "\u202e")).toEqual([]);
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html.match(/<rect /g)).toHaveLength(7);
    expect(html).toContain("<title>2026-01-06: 2 messages</title>");
    // The time links to the segment, whose id is only the link's title.
    expect(html).toMatch(
      /<a href="report\.html#segment=help\/s1" title="segment s1">2026-01-06 \d\d:\d\d<\/a>/,
    );
    expect(html).toContain("3 messages, 2 conversations, 2 active people");
    const unlinked = digestHtml(await hostileDigest());
    expect(unlinked).not.toContain("<a ");
    expect(unlinked).toMatch(/\d\d:\d\d <span class="muted">\(segment s1\)<\/span>/);
    const unanswered = html.indexOf("<h2>Unanswered (1), oldest first</h2>");
    const answered = html.indexOf("<h2>Answered (1)</h2>");
    expect(html).toContain("<h2>Unclear (0): whether an answer came is not clear</h2>");
    expect(unanswered).toBeGreaterThan(0);
    expect(html.indexOf("why &lt;script")).toBeGreaterThan(unanswered);
    expect(html.indexOf("answer: answer &lt;script")).toBeGreaterThan(answered);
  });

  it("text: the sections as a terminal reads them, chat text as written but without controls", async () => {
    const digest = await hostileDigest();
    const rust = {
      ...digest,
      topics: digest.topics.map((t) => ({ ...t, topic: `std::process::Command ${t.topic}` })),
    };
    const text = digestText(rust);

    expect(text.split("\n").filter((l) => /^\S/.test(l))).toEqual([
      "Digest: help",
      "2026-01-05 to 2026-01-11 (UTC), generated 2026-01-12 00:00",
      "Activity",
      "New topics",
      "Recurring topics",
      "Community health",
      "Unanswered (1), oldest first",
      "Unclear (0): whether an answer came is not clear",
      "Answered (1)",
    ]);
    expect(text).toContain(
      "  help: 3 messages, 2 conversations, 2 active people; busiest 2026-01-06 (2)",
    );
    // No Markdown: no escapes, no links, no table.
    expect(text).toContain(
      "  - std::process::Command grub bootloader in help: 1 conversation, 1 earlier conversation since 2026-01-02",
    );
    expect(text).toContain("evidence: 2026-01-06 00:00 (segment s1)");
    expect(text).toContain("why <script>alert(1)</script> **bold** [x](javascript:alert(1)) @here");
    expect(text).toContain("    answer: answer <script>");
    expect(text).not.toMatch(/\\|\]\(report|\|/);
    expect([...text].filter((c) => c === "\u001b" || c === "\u202e")).toEqual([]);
    const quiet = { ...digest, topics: [], unanswered: [], answered: [] };
    expect(digestText(quiet).match(/^ {2}None\.$/gm)).toHaveLength(5);
  });

  it("JSON: the Digest itself", async () => {
    const digest = await hostileDigest();
    expect(JSON.parse(digestJson(digest))).toEqual(digest);
  });

  it("names a channel as people know it, beside its id, in every form's headings and entries", async () => {
    const sources = memorySources({
      supports: [support("C0HELP", "s1", "grub bootloader", SINCE + DAY)],
      results: [
        result("C0HELP", "s1", SINCE + DAY, SINCE + DAY + 1, [
          question("q1", SINCE + DAY, "unanswered", "why?"),
        ]),
      ],
      messages: [{ channel: "C0HELP", ts: SINCE + DAY, author: "ann", segmentId: "s1" }],
    });
    const period = { since: SINCE, until: UNTIL, now: new Date(UNTIL) };
    const digest = await buildDigest(sources, {
      channels: ["C0HELP", "ops"],
      ...period,
      // A name that is the id, or of a channel not in the digest, is no name.
      names: { C0HELP: "help", ops: "ops", C0OTHER: "other" },
    });
    expect(digest.names).toEqual({ C0HELP: "help" });
    const text = digestText(digest);
    expect(text).toMatch(/^Digest: help \(C0HELP\), ops$/m);
    expect(text).toMatch(/^ {2}help \(C0HELP\): 1 message, 1 conversation, 1 active person;/m);
    expect(text).toContain("grub bootloader in help (C0HELP): 1 conversation");
    expect(text).toContain("(asked 2026-01-06 00:00 in help (C0HELP), segment s1)");
    const md = digestMarkdown(digest);
    expect(md).toMatch(/^# Digest: help \(C0HELP\), ops$/m);
    expect(md).toContain("| help (C0HELP) | 1 | 1 | 1 | 2026-01-06 (1) |");
    expect(digestHtml(digest)).toContain("<h3>help (C0HELP)</h3>");
    // IRC's `#ops` of the channel `ops`: the name alone, not `#ops (ops)`.
    expect(digestText({ ...digest, names: { ...digest.names, ops: "#ops" } })).toMatch(
      /^Digest: help \(C0HELP\), #ops$/m,
    );
    const unnamed = await buildDigest(sources, { channels: ["C0HELP"], ...period });
    expect(unnamed.names).toBeUndefined();
    expect(digestText(unnamed)).toMatch(/^Digest: C0HELP$/m);
  });

  it("says counts as people read them: 1,200 messages, 1 person", async () => {
    const digest = await hostileDigest();
    const big = {
      ...digest,
      activity: digest.activity.map((a) => ({ ...a, messages: 1200, activePeople: 1 })),
    };

    expect(digestHtml(big)).toContain("1,200 messages, 2 conversations, 1 active person");
    expect(digestMarkdown(big)).toMatch(/\| help \| 1,200 \| 2 \| 1 \|/);
    expect(digestText(big)).toContain("help: 1,200 messages, 2 conversations, 1 active person;");
  });
});
