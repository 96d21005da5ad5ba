/**
 * Each digest entry links to the platform's own page of its first evidence message where the
 * platform has one (Slack's; Discord's with its guild; a Telegram supergroup's), in every form;
 * other messages get none, and no id or channel that is not of its platform's shape ever becomes
 * a link.
 */
import {
  buildDigest,
  type Digest,
  digestHtml,
  digestJson,
  digestMarkdown,
  digestText,
  slackDigestPayload,
} from "convoseg/digest";
import { describe, expect, it } from "vitest";
import { DAY, memorySources, result, SINCE, support, UNTIL } from "./fixtures.js";

const C = "C0HELP";
const ASKED = "1736100000.000100";
const REPLY = "1736100000.000200";
const TOPIC = "1736200000.000300";
const ASKED_LINK = `https://slack.com/archives/${C}/p1736100000000100`;
const TOPIC_LINK = `https://slack.com/archives/${C}/p1736200000000300?thread_ts=1736200000.000001&cid=${C}`;

/** A digest of `channel` whose messages carry `platform`: a topic and an unanswered question. */
function digestOf(
  channel: string,
  platform: string | undefined,
  ids = { asked: ASKED, topic: TOPIC, thread: "1736200000.000001" },
  place: { guild?: string; chatUsername?: string } = {},
): Promise<Digest> {
  const at = (id: string, thread?: string) => ({
    id,
    channel,
    ...(platform === undefined ? {} : { platform }),
    ...(thread === undefined ? {} : { thread }),
    ...place,
  });
  return buildDigest(
    memorySources({
      supports: [
        support(channel, "s2", "wifi driver", SINCE + 2 * DAY, {
          messageIds: [ids.topic, ids.topic],
          thread: ids.thread,
        }),
      ],
      results: [
        result(channel, "s1", SINCE + DAY, SINCE + DAY + 1, [
          {
            id: "q1",
            question: "why does it drop?",
            status: "unanswered",
            askedId: ids.asked,
            askedTs: SINCE + DAY,
            answerIds: [],
          },
          {
            id: "q2",
            question: "which kernel?",
            status: "answered",
            askedId: "1736100000.000900",
            askedTs: SINCE + DAY + 5,
            answer: "6.8",
            answerIds: [REPLY],
          },
        ]),
      ],
      // q2's asking message is not stored: no link for it.
      links: [at(ids.asked), at(REPLY, ids.asked), at(ids.topic, ids.thread)],
    }),
    { channels: [channel], since: SINCE, until: UNTIL, now: new Date(UNTIL) },
  );
}

describe("digest permalinks", () => {
  it("a Slack workspace's entries carry the link of their first evidence message", async () => {
    const digest = await digestOf(C, "slack");
    expect(digest.topics.map((t) => t.permalink)).toEqual([TOPIC_LINK]);
    expect(digest.unanswered.map((q) => q.permalink)).toEqual([ASKED_LINK]);
    expect(digest.answered.map((q) => q.permalink)).toEqual([undefined]);
    expect(JSON.parse(JSON.stringify(digest)).answered[0]).not.toHaveProperty("permalink");
  });

  it("a Discord guild's and a Telegram group's entries carry theirs", async () => {
    const guild = "900000000000000001";
    const channel = "910000000000000001";
    const snowflakes = { asked: "1195000000000000001", topic: "1195000000000000003", thread: "" };
    const discord = await digestOf(channel, "discord", snowflakes, { guild });
    expect(discord.unanswered[0]?.permalink).toBe(
      `https://discord.com/channels/${guild}/${channel}/1195000000000000001`,
    );
    expect(digestMarkdown(discord)).toContain(
      `[open in Discord](https://discord.com/channels/${guild}/${channel}/1195000000000000001)`,
    );
    const group = "-1001234567890";
    const telegram = { asked: `${group}:55`, topic: `${group}:60`, thread: `${group}:50` };
    const members = await digestOf(group, "telegram", telegram);
    expect(members.unanswered[0]?.permalink).toBe("https://t.me/c/1234567890/55");
    const open = await digestOf(group, "telegram", telegram, { chatUsername: "ubuntu_help" });
    expect(open.unanswered[0]?.permalink).toBe("https://t.me/ubuntu_help/55");
    expect(open.topics[0]?.permalink).toBe("https://t.me/ubuntu_help/60");
    expect(digestHtml(open)).toContain(
      '<a href="https://t.me/ubuntu_help/55">open in Telegram</a>',
    );
    expect(JSON.stringify(slackDigestPayload(open))).toContain("open in Telegram");
  });

  it("another platform's (or none named), or one without what its link needs, carry none", async () => {
    for (const [channel, platform] of [
      // A Discord message without its guild (a direct message's, or stored before guilds were).
      ["123456789012345678", "discord"],
      // Slack's ids on Telegram: not a Telegram message's id.
      ["-1001234567890", "telegram"],
      [C, undefined],
      [C, "irc"],
    ] as const) {
      const digest = await digestOf(channel, platform);
      expect([...digest.topics, ...digest.unanswered, ...digest.answered]).not.toContainEqual(
        expect.objectContaining({ permalink: expect.anything() }),
      );
    }
  });

  it("no id, thread or channel that is not of Slack's shape becomes a link", async () => {
    const hostile = `${ASKED}"><script>alert(1)</script>`;
    const digest = await digestOf(C, "slack", {
      asked: hostile,
      topic: "javascript:alert(1)",
      thread: "1&cid=x",
    });
    expect(digest.unanswered[0]?.permalink).toBeUndefined();
    expect(digest.topics[0]?.permalink).toBeUndefined();
    const lower = await digestOf("c0help", "slack");
    expect(lower.unanswered[0]?.permalink).toBeUndefined();
    // A thread not of Slack's shape is left out of the link, never written into it.
    const threaded = await digestOf(C, "slack", { asked: ASKED, topic: TOPIC, thread: "x&y" });
    expect(threaded.topics[0]?.permalink).toBe(`https://slack.com/archives/${C}/p1736200000000300`);
  });

  it("every form links a Slack workspace's entries: Markdown, HTML, Slack, text, JSON", async () => {
    const digest = await digestOf(C, "slack");
    const md = digestMarkdown(digest);
    expect(md).toContain(
      `- **wifi driver** in ${C}: 1 conversation · [open in Slack](${TOPIC_LINK})`,
    );
    expect(md).toContain(
      `(asked 2026-01-06 00:00 (segment s1) in ${C}) · [open in Slack](${ASKED_LINK})`,
    );
    const html = digestHtml(digest);
    expect(html).toContain(` · <a href="${TOPIC_LINK.replace("&", "&amp;")}">open in Slack</a>`);
    expect(html).toContain(` · <a href="${ASKED_LINK}">open in Slack</a>`);
    const slack = JSON.stringify(slackDigestPayload(digest).blocks);
    expect(slack).toContain(JSON.stringify(` · <${TOPIC_LINK}|open in Slack>`).slice(1, -1));
    expect(slack).toContain(JSON.stringify(` · <${ASKED_LINK}|open in Slack>`).slice(1, -1));
    const text = digestText(digest);
    expect(text).toContain(`1 conversation <${TOPIC_LINK}>`);
    expect(text).toContain(`segment s1) <${ASKED_LINK}>`);
    const json = JSON.parse(digestJson(digest)) as Digest;
    expect(json.topics[0]?.permalink).toBe(TOPIC_LINK);
    expect(json.unanswered[0]?.permalink).toBe(ASKED_LINK);
    // Only the entries with a link have one: the answered question's asking is not stored.
    expect(md.match(/open in Slack/g)).toHaveLength(2);
    expect(html.match(/open in Slack/g)).toHaveLength(2);
    expect(slack.match(/open in Slack/g)).toHaveLength(2);
    expect(text.match(/https:/g)).toHaveLength(2);
  });

  it("no form links entries whose messages have no link", async () => {
    const digest = await digestOf("123456789012345678", "discord");
    for (const form of [
      digestMarkdown(digest),
      digestHtml(digest),
      digestText(digest),
      digestJson(digest),
      JSON.stringify(slackDigestPayload(digest)),
    ]) {
      expect(form).not.toMatch(/slack\.com|discord\.com|open in|permalink/);
    }
  });

  it("a permalink not of Slack's shape (a digest read back from anywhere) is never linked", async () => {
    const digest = await digestOf(C, "slack");
    for (const bad of [
      "javascript:alert(1)",
      "http://slack.com/archives/C0HELP/p1",
      "https://slack.com.evil.example/archives/C0HELP/p1",
      'https://slack.com/archives/C0HELP/p1"><script>alert(1)</script>',
      "https://slack.com/archives/C0HELP/p1|<!channel>",
      "https://slack.com/archives/C0HELP/p1) [x](javascript:alert(1)",
      "https://slack.com/archives/C0HELP/p1\n# heading",
      "https://discord.com/channels/@me/123456789012345678/123456789012345678",
      "https://discord.com/channels/900000000000000001/910000000000000001/1?x=<script>",
      "https://t.me/evil.example/55",
      "https://t.me/ubuntu_help/55#<script>",
      "http://t.me/ubuntu_help/55",
    ]) {
      const forged: Digest = {
        ...digest,
        topics: digest.topics.map((t) => ({ ...t, permalink: bad })),
        unanswered: digest.unanswered.map((q) => ({ ...q, permalink: bad })),
      };
      for (const form of [
        digestMarkdown(forged),
        digestHtml(forged),
        digestText(forged),
        JSON.stringify(slackDigestPayload(forged)),
      ]) {
        expect(form, bad).not.toMatch(/open in|slack\.com|discord\.com|t\.me|javascript|<script/);
      }
    }
  });
});
