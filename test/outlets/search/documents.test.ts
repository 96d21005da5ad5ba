import { mergeSupports } from "convoseg/knowledge/read";
import { searchDocuments } from "convoseg/search";
import { describe, expect, it } from "vitest";
import { segmentResult, topicSupport } from "../../support/segment-result.js";

const C = "C024BE91L";
const messages = [
  {
    id: "1741000000.000100",
    ts: 1,
    channel: C,
    user: "ana",
    userId: "U1",
    text: "wifi drops every hour",
    platform: "slack",
  },
  {
    id: "1741000000.000200",
    ts: 2,
    channel: C,
    user: "bo",
    text: "try the 6.8 kernel",
    platform: "slack",
    thread: "1741000000.000100",
  },
  { id: "j1", ts: 3, channel: C, text: "cy has joined", kind: "system" as const },
  { id: "m4", ts: 4, channel: "irc", user: "dee", text: "   " },
];

describe("searchDocuments", () => {
  it("makes a document per message, segment, question and topic, each with its evidence and link", () => {
    const result = segmentResult(C, "seg1", {
      first: { id: messages[0].id, ts: 1 },
      last: { id: messages[1].id, ts: 2 },
      messageIds: [messages[0].id, messages[1].id],
      questions: [
        {
          id: "q1",
          question: "why does wifi drop?",
          status: "answered",
          askedId: messages[0].id,
          askedTs: 1,
          askedBy: "ana",
          answer: "an old kernel",
          answerIds: [messages[1].id],
        },
      ],
    });
    const topics = mergeSupports([
      topicSupport(C, "seg1", "wifi drops", "wifi drops", {
        messageIds: [messages[0].id, messages[1].id],
      }),
    ]).map((topic) => ({ channel: C, topic }));
    const docs = searchDocuments({ messages, results: [result], topics });
    expect(docs.map((d) => d.id)).toEqual([
      `message:${C}:1741000000.000100`,
      `message:${C}:1741000000.000200`,
      `conversation:${C}:seg1`,
      `question:${C}:q1`,
      `topic:${C}:wifi drops`,
    ]);
    const [first, reply, conversation, question, topic] = docs;
    // Slack's own links: a thread reply's names its thread.
    expect(first?.permalink).toBe(`https://slack.com/archives/${C}/p1741000000000100`);
    expect(reply?.permalink).toBe(
      `https://slack.com/archives/${C}/p1741000000000200?thread_ts=1741000000.000100&cid=${C}`,
    );
    expect([first?.segment, first?.authorId, first?.evidence]).toEqual([
      "seg1",
      "U1",
      [messages[0].id],
    ]);
    expect(conversation?.text).toBe(
      "why does wifi drop?\nwifi drops every hour\ntry the 6.8 kernel",
    );
    expect(conversation?.evidence).toEqual([messages[0].id, messages[1].id]);
    expect(question).toMatchObject({
      status: "answered",
      author: "ana",
      text: "why does wifi drop?\nan old kernel",
      evidence: [messages[0].id, messages[1].id],
    });
    expect(topic).toMatchObject({
      title: "wifi drops",
      segment: "seg1",
      evidence: [messages[0].id, messages[1].id],
    });
    // A conversation, a question and a topic open at their first evidence message.
    for (const doc of [conversation, question, topic])
      expect(doc?.permalink).toBe(first?.permalink);
  });

  it("links a Discord message by its guild and a Telegram one by its group's name", () => {
    const guild = "900000000000000001";
    const channel = "910000000000000001";
    const docs = searchDocuments({
      messages: [
        { id: "1195000000000000002", ts: 1, channel, text: "hi", platform: "discord", guild },
        {
          id: "-1001234567890:55",
          ts: 2,
          channel: "-1001234567890",
          text: "hi",
          platform: "telegram",
          chatUsername: "ubuntu_help",
        },
        {
          id: "-1001234567890:56",
          ts: 3,
          channel: "-1001234567890",
          text: "hi",
          platform: "telegram",
        },
      ],
      results: [],
      topics: [],
    });
    expect(docs.map((d) => d.permalink)).toEqual([
      `https://discord.com/channels/${guild}/${channel}/1195000000000000002`,
      "https://t.me/ubuntu_help/55",
      "https://t.me/c/1234567890/56",
    ]);
  });

  it("links no message it cannot: another platform, a Discord one without guild, other ids", () => {
    const docs = searchDocuments({
      messages: [
        {
          id: "1195000000000000002",
          ts: 1,
          channel: "910000000000000001",
          text: "hi",
          platform: "discord",
        },
        { id: "x", ts: 1, channel: C, text: "hi", platform: "slack" },
      ],
      results: [],
      topics: [],
    });
    expect(docs.map((d) => [d.permalink, d.segment])).toEqual([
      ["", ""],
      ["", ""],
    ]);
  });
});
