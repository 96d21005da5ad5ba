/**
 * The report of a channel in linked mode: the reply linker's conversations as streams of their
 * own beside the threads, and the links it inferred told apart from the platform's.
 */
import { buildReport, parseSegmentRecord, type ReportMessage } from "convoseg/report";
import { describe, expect, it } from "vitest";
import {
  LINKED_CHANNEL,
  LINKED_MESSAGES,
  LINKED_SEGMENTS,
  LINKED_T0,
} from "./conversation-fixtures.js";

const MINUTE = 60_000;
const T0 = LINKED_T0;
const CHANNEL = LINKED_CHANNEL;
const MESSAGES = LINKED_MESSAGES;
const SEGMENTS = LINKED_SEGMENTS;

/** The report of `segments`, and of `messages` (null: without them). */
const report = (segments = SEGMENTS, messages: ReportMessage[] | null = MESSAGES) =>
  buildReport({
    segments,
    ...(messages === null ? {} : { messages }),
    settle: 10 * MINUTE,
    now: T0 + 24 * 60 * MINUTE,
    generatedAt: T0,
  }).data;

describe("report data: linked conversations", () => {
  it("makes a row of each conversation after the threads, in the order they started", () => {
    const [channel] = report().channels;
    expect(channel.threads).toEqual([
      // The thread of b1, apart from the conversation b1 started among the channel's messages.
      { root: "b1", author: "bo", excerpt: "lunch, anyone?", segments: [2] },
      {
        root: "a1",
        linked: true,
        start: T0,
        author: "ana",
        excerpt: "anyone know how to mount an ntfs disk?",
        segments: [1, 4],
      },
      {
        root: "b1",
        linked: true,
        start: T0 + MINUTE,
        author: "bo",
        excerpt: "lunch, anyone?",
        segments: [0],
      },
    ]);
    // The join is the channel's own: in no conversation.
    expect(channel.segments.map((s) => s.thread)).toEqual([2, 1, 0, undefined, 1]);
  });

  it("measures a conversation's cuts within it: each starts anew, and resumes after its own silence", () => {
    const [channel] = report().channels;
    expect(channel.segments.map((s) => [s.cut, s.gapMs])).toEqual([
      ["start", null],
      ["start", null],
      ["start", null],
      ["start", null],
      // From r1, a1's conversation's last message before it: 35 minutes, over the settle.
      ["silence", 35 * MINUTE],
    ]);
  });

  it("shows the links the linker inferred as inferred, and the platform's as the platform's", () => {
    const { messages } = report().channels[0];
    // a1 b1 a2 b2 j1 r1 x1 a3 in channel order.
    expect(messages?.replyTo).toEqual([-1, -1, 0, 1, -1, 0, 1, 2]);
    // r1's platform reply and x1's thread are said; a2's and b2's (on the messages) and a3's (on
    // its segment's body) inferred.
    expect(messages?.inferred).toEqual([0, 0, 1, 1, 0, 0, 0, 1]);
  });

  it("counts the conversations in the summary", () => {
    expect(report().summary.conversations).toBe(2);
  });

  it("names a conversation that opens with a greeting by its first message that says more", () => {
    const greeted = (text: string) => MESSAGES.map((m) => (m.id === "a1" ? { ...m, text } : m));
    const names = (messages: ReportMessage[]) =>
      report(SEGMENTS, messages).channels[0].threads.map((t) => [t.root, t.author, t.excerpt]);
    for (const hello of ["Hi", "hello everyone!", "Good morning all :)", "hey guys o/"])
      expect(names(greeted(hello))[1]).toEqual(["a1", "cy", "ana: use ntfs-3g"]);
    // More than a greeting, or a conversation of nothing else: named by its first message.
    for (const text of ["hi, how do I mount an ntfs disk?", "hello world program fails"])
      expect(names(greeted(text))[1]).toEqual(["a1", "ana", text]);
    const onlyGreetings = greeted("hi").map((m) =>
      ["a2", "r1", "a3"].includes(m.id) ? { ...m, text: "hey" } : m,
    );
    expect(names(onlyGreetings)[1]).toEqual(["a1", "ana", "hi"]);
    // A thread keeps its root's words, a greeting or not.
    const thread = MESSAGES.map((m) => (m.id === "b1" ? { ...m, text: "hi all" } : m));
    expect(names(thread)[0]).toEqual(["b1", "bo", "hi all"]);
  });

  it("without the messages, still knows the conversations by the segment lines", () => {
    const [channel] = report(SEGMENTS, null).channels;
    expect(channel.threads.map((t) => [t.root, t.linked ?? false, t.segments])).toEqual([
      ["b1", false, [2]],
      ["a1", true, [1, 4]],
      ["b1", true, [0]],
    ]);
    expect(channel.threads[1]).not.toHaveProperty("author");
  });

  it("leaves a contiguous run's report as it was: no conversations, no inferred links", () => {
    const contiguous = SEGMENTS.map(({ conversation, messages, ...rest }) => rest);
    const plain = MESSAGES.map(({ inferredReplyTo, ...rest }) => rest);
    const data = report(contiguous, plain);
    expect(data.summary).not.toHaveProperty("conversations");
    expect(data.channels[0].threads.map((t) => t.root)).toEqual(["b1"]);
    expect(data.channels[0].messages).not.toHaveProperty("inferred");
    expect(data.channels[0].messages?.replyTo).toEqual([-1, -1, -1, -1, -1, 0, 1, -1]);
  });
});

describe("segment records: linked conversations", () => {
  const line = {
    channel: CHANNEL,
    segmentId: "s5",
    messageIds: ["a3", "a4"],
    first: { id: "a3", ts: 1000 },
    last: { id: "a4", ts: 2000 },
  };

  it("reads a segment's conversation and the links its inline messages carry", () => {
    const record = parseSegmentRecord({
      ...line,
      conversation: "a1",
      messages: [
        { id: "a3", ts: 1000, text: "thanks", inferredReplyTo: "a2" },
        { id: "a4", ts: 2000, text: "np", replyTo: "a3" },
      ],
    });
    expect(record.conversation).toBe("a1");
    expect(record.messages).toEqual([{ id: "a3", inferredReplyTo: "a2" }]);
    const plain = parseSegmentRecord({ ...line, conversation: null, messages: [] });
    expect(plain).not.toHaveProperty("conversation");
    expect(plain).not.toHaveProperty("messages");
  });

  it("names the field at fault", () => {
    expect(() => parseSegmentRecord({ ...line, conversation: 7 })).toThrow(/^conversation: /);
    expect(() => parseSegmentRecord({ ...line, messages: {} })).toThrow(/^messages: /);
    expect(() =>
      parseSegmentRecord({ ...line, messages: [{ id: "a3", inferredReplyTo: 4 }] }),
    ).toThrow(/^messages\[0\]\.inferredReplyTo: /);
  });
});
