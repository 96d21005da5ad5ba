import {
  type AskAnswer,
  answerAsk,
  composeAnswer,
  discordAnswer,
  messageLink,
  slackAnswer,
  telegramAnswer,
} from "convoseg/ask";
import type { SearchHit } from "convoseg/search";
import { describe, expect, it } from "vitest";

const hit = (over: Partial<SearchHit> & Pick<SearchHit, "id" | "kind">): SearchHit => ({
  channel: "C0HELP",
  ts: Date.parse("2025-03-01T10:00:00Z"),
  author: "",
  authorId: "",
  title: "",
  status: "",
  segment: "s1",
  evidence: ["1740823200.000100"],
  permalink: "",
  score: 1,
  snippet: "",
  marks: [],
  ...over,
});

const slack = { platform: "slack" } as const;

describe("composeAnswer", () => {
  it("lists answered questions first, then conversations, then messages, each with its link", () => {
    const hits = [
      hit({
        id: "m",
        kind: "message",
        snippet: "try grub-install",
        evidence: ["1740823300.000100"],
        permalink: "https://slack.com/archives/C0HELP/p1740823300000100",
      }),
      hit({ id: "c", kind: "conversation", title: "grub repair", evidence: ["1740823250.000100"] }),
      hit({ id: "u", kind: "question", status: "unanswered", title: "grub again?" }),
      hit({
        id: "q",
        kind: "question",
        status: "answered",
        title: "How do I repair grub?",
        snippet: "How do I repair grub? Boot a live USB and run grub-install",
      }),
    ];
    const answer = composeAnswer("repair grub", hits, slack, 4);
    expect(answer.items.map((i) => i.kind)).toEqual([
      "question",
      "conversation",
      "question",
      "message",
    ]);
    expect(answer.items[0]).toEqual({
      kind: "question",
      title: "How do I repair grub?",
      answer: "Boot a live USB and run grub-install",
      link: "https://slack.com/archives/C0HELP/p1740823200000100",
      ts: Date.parse("2025-03-01T10:00:00Z"),
    });
    expect(answer.items[3].link).toBe("https://slack.com/archives/C0HELP/p1740823300000100");
    expect(composeAnswer("repair grub", hits, slack).items).toHaveLength(3);
  });

  it("links a Discord hit by its stored guild, else the asking guild's", () => {
    const guild = "900000000000000001";
    const channel = "910000000000000001";
    const stored = `https://discord.com/channels/${guild}/${channel}/1195000000000000001`;
    const hits = [
      hit({
        id: "a",
        kind: "message",
        channel,
        evidence: ["1195000000000000001"],
        permalink: stored,
      }),
      hit({ id: "b", kind: "message", channel, evidence: ["1195000000000000002"] }),
    ];
    const asking = { platform: "discord", guild: "900000000000000009" } as const;
    expect(composeAnswer("grub", hits, asking).items.map((i) => i.link)).toEqual([
      stored,
      `https://discord.com/channels/900000000000000009/${channel}/1195000000000000002`,
    ]);
    // The stored link is the same rule's: messageLink is messagePermalink with the place.
    expect(messageLink({ platform: "discord", guild }, channel, "1195000000000000001")).toBe(
      stored,
    );
  });

  it("makes Discord and Telegram links from ids only", () => {
    const snowflake = "1234567890123456789";
    expect(messageLink({ platform: "discord", guild: snowflake }, snowflake, snowflake)).toBe(
      `https://discord.com/channels/${snowflake}/${snowflake}/${snowflake}`,
    );
    expect(messageLink({ platform: "discord" }, snowflake, snowflake)).toBe("");
    expect(messageLink({ platform: "discord", guild: "x/../evil" }, snowflake, snowflake)).toBe("");
    expect(messageLink({ platform: "telegram" }, "-1001234", "-1001234:55")).toBe(
      "https://t.me/c/1234/55",
    );
    expect(
      messageLink({ platform: "telegram", chatUsername: "ubuntu_help" }, "-1001234", "-1001234:55"),
    ).toBe("https://t.me/ubuntu_help/55");
    // A message of another chat, or a name that is no Telegram username, links nowhere else.
    expect(messageLink({ platform: "telegram" }, "-1001234", "-1009999:55")).toBe("");
    expect(
      messageLink({ platform: "telegram", chatUsername: "a/b" }, "-1001234", "-1001234:55"),
    ).toBe("https://t.me/c/1234/55");
  });
});

describe("the rendered answers", () => {
  const hostile: AskAnswer = {
    words: "<!channel> *bold*",
    items: [
      {
        kind: "message",
        title: "<!here> @everyone <@U123> [x](http://evil) **b** `c` <#C1|gen>\u202e",
        link: "https://slack.com/archives/C0HELP/p1740823200000100",
        ts: 0,
      },
    ],
  };

  it("make chat text literal on Slack: no broadcast, mention, link or marker", () => {
    const { text } = slackAnswer(hostile);
    expect(text).not.toMatch(/<!|<@|<#|<http:\/\/evil|\*\*b|`c`|\u202e/);
    expect(text).toContain("&lt;!here&gt; @\u2060everyone");
    expect(text).toContain("<https://slack.com/archives/C0HELP/p1740823200000100|1970-01-01>");
    expect(slackAnswer(hostile).response_type).toBe("ephemeral");
    expect(slackAnswer(hostile, true).response_type).toBe("in_channel");
  });

  it("make chat text literal on Discord, with every mention switched off", () => {
    const message = discordAnswer(hostile);
    expect(message.allowed_mentions).toEqual({ parse: [] });
    expect(message.content).toContain("\\[x\\]\\(http\\://evil\\)");
    expect(message.content).toContain("\\*\\*b\\*\\*");
    expect(message.content).not.toMatch(/(^|[^\u2060])@everyone/);
  });

  it("send plain text to Telegram, with no parse mode", () => {
    const message = telegramAnswer(hostile, -1001, 7);
    expect(message).not.toHaveProperty("parse_mode");
    expect(message.reply_parameters).toEqual({ message_id: 7, allow_sending_without_reply: true });
    expect(message.text).not.toContain("\u202e");
  });

  it("say when nothing was found", () => {
    expect(slackAnswer({ words: "x", items: [] }).text).toBe(
      `Nothing found in this channel's history for "x".`,
    );
  });
});

describe("answerAsk", () => {
  const posts: { url: string; init: RequestInit }[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    posts.push({ url, init });
    return new Response("{}", { status: 200 });
  }) as unknown as typeof globalThis.fetch;

  it("searches the asking channel only, and refuses a response_url that is not Slack's", async () => {
    const asked: unknown[] = [];
    const search = async (query: unknown) => {
      asked.push(query);
      return [];
    };
    const job = {
      platform: "slack" as const,
      channel: "C0HELP",
      words: "grub",
      responseUrl: "https://hooks.slack.com/commands/T/1/x",
      inChannel: false,
    };
    await answerAsk(job, { search, fetch });
    expect(asked).toEqual([{ text: "grub", channels: ["C0HELP"], limit: 20 }]);
    await expect(
      answerAsk({ ...job, responseUrl: "http://169.254.169.254/latest" }, { search, fetch }),
    ).rejects.toMatchObject({ name: "AskError", code: "ASK_BAD_JOB" });
    expect(posts).toHaveLength(1);
  });

  it("answers a mention in its thread with the bot token, and fails on Slack's ok: false", async () => {
    const sent: { url: string; init: RequestInit }[] = [];
    const slackApi = (ok: boolean) =>
      (async (url: string, init: RequestInit) => {
        sent.push({ url, init });
        return Response.json(ok ? { ok } : { ok, error: "not_in_channel" });
      }) as unknown as typeof globalThis.fetch;
    const job = {
      platform: "slack" as const,
      channel: "C0HELP",
      words: "grub",
      inChannel: true,
      thread: "1740823200.000100",
    };
    const deps = { search: async () => [], slackToken: async () => "xoxb-1" };
    await answerAsk(job, { ...deps, fetch: slackApi(true) });
    expect(sent[0].url).toBe("https://slack.com/api/chat.postMessage");
    expect(new Headers(sent[0].init.headers).get("authorization")).toBe("Bearer xoxb-1");
    expect(JSON.parse(String(sent[0].init.body))).toMatchObject({
      channel: "C0HELP",
      thread_ts: "1740823200.000100",
    });
    await expect(answerAsk(job, { ...deps, fetch: slackApi(false) })).rejects.toMatchObject({
      code: "ASK_POST_FAILED",
      message: "slack chat.postMessage: not_in_channel",
    });
  });

  it("tells the asker when the search fails, and the caller when the post does", async () => {
    posts.length = 0;
    const failing = async () => {
      throw new Error("index unreadable");
    };
    const job = {
      platform: "discord" as const,
      channel: "1234567890123456789",
      words: "grub",
      applicationId: "1234567890123456789",
      token: "tok",
    };
    expect(await answerAsk(job, { search: failing, fetch })).toEqual({
      items: 0,
      searchFailed: true,
    });
    expect(JSON.parse(String(posts[0].init.body)).content).toMatch(/not available/);
    const refusing = (async () => new Response("no", { status: 404 })) as unknown as typeof fetch;
    await expect(answerAsk(job, { search: async () => [], fetch: refusing })).rejects.toMatchObject(
      { code: "ASK_POST_FAILED", message: expect.not.stringContaining("tok") },
    );
    await expect(
      answerAsk({ ...job, token: "a/../../x" }, { search: async () => [], fetch }),
    ).rejects.toMatchObject({ code: "ASK_BAD_JOB" });
  });
});
