import type { ChatMessage } from "convoseg/messages";
import { buildReport, NOT_IN_INPUT } from "convoseg/report";
import { describe, expect, it } from "vitest";
import type { SegmentRecord } from "../../../lib/outlets/report/records.js";

const T0 = Date.UTC(2025, 2, 3, 8);
const MINUTE = 60_000;
const where = { channel: "C1", platform: "slack" };
const MESSAGES: ChatMessage[] = [
  { id: "1", ts: T0, text: "ana has joined", kind: "system", ...where, channelName: "general" },
  { id: "2", ts: T0 + MINUTE, user: "ana", text: "how?", ...where, channelName: "general" },
  { id: "3", ts: T0 + 2 * MINUTE, user: "bo", text: "so", replyTo: "2", ...where },
  {
    id: "4",
    ts: T0 + 3 * MINUTE,
    user: "cy",
    text: "+1",
    thread: "2",
    ...where,
    channelName: "dev",
  },
  { id: "5", ts: T0 + 4 * MINUTE, user: "ana", text: "?", replyTo: "0", ...where },
];
const segment = (messages: ChatMessage[]): SegmentRecord => ({
  segmentId: "s1",
  channel: "C1",
  late: false,
  belongsAfter: null,
  first: { id: messages[0].id, ts: messages[0].ts },
  last: { id: (messages.at(-1) as ChatMessage).id, ts: (messages.at(-1) as ChatMessage).ts },
  messageIds: messages.map((m) => m.id),
});

describe("report data: the platform fields", () => {
  it("marks each reply's answered message, system lines, and the channel's latest display name", () => {
    const report = buildReport({
      segments: [segment(MESSAGES)],
      messages: MESSAGES,
      settle: 24 * 60 * MINUTE,
      now: T0 + 48 * 60 * MINUTE,
      generatedAt: T0,
    });
    const [channel] = report.data.channels;
    expect(channel.name).toBe("C1");
    expect(channel.displayName).toBe("dev");
    // A thread reply answers its root; an answered message not in the input is NOT_IN_INPUT.
    expect(channel.messages?.replyTo).toEqual([-1, -1, 1, 1, NOT_IN_INPUT]);
    expect(channel.messages?.kind).toEqual([2, 0, 0, 0, 0]);
  });

  it("adds nothing for chat without them", () => {
    const plain = MESSAGES.map(({ id, ts, channel, user, text }) => ({
      id,
      ts,
      channel,
      user,
      text,
    }));
    const report = buildReport({
      segments: [segment(plain)],
      messages: plain,
      settle: 24 * 60 * MINUTE,
      now: T0 + 48 * 60 * MINUTE,
      generatedAt: T0,
    });
    const [channel] = report.data.channels;
    expect(channel).not.toHaveProperty("displayName");
    expect(channel.messages).not.toHaveProperty("replyTo");
    expect(channel.messages).not.toHaveProperty("kind");
  });
});
