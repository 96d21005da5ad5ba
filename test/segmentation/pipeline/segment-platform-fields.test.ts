import { type Message, textMessage } from "convoseg/history";
import type { PlannedSegment } from "convoseg/pipeline";
import { parseSegmentBody, readSegmentMessages, segmentBody } from "convoseg/pipeline/contract";
import { describe, expect, it } from "vitest";

const T0 = 1_700_000_000_000;
const TABLE = "history";
const where = { platform: "discord", channelName: "help" };
const messages: Message[] = [
  textMessage("user", "how do I pin?", { id: "1", ts: T0, author: "ana", userId: "11", ...where }),
  textMessage("user", "right-click it", {
    id: "2",
    ts: T0 + 1,
    author: "bo",
    userId: "22",
    replyTo: "1",
    thread: "1",
    ...where,
  }),
  textMessage("user", "old line", { id: "3", ts: T0 + 2, author: "cy" }),
];
const segment: PlannedSegment = {
  segmentId: "help:1",
  channel: "help",
  messages: messages.map((m) => ({ id: m.id as string, ts: m.ts as number })),
  late: false,
  belongsAfter: null,
};
const expected = [
  { id: "1", ts: T0, author: "ana", text: "how do I pin?", userId: "11", ...where },
  {
    id: "2",
    ts: T0 + 1,
    author: "bo",
    text: "right-click it",
    userId: "22",
    replyTo: "1",
    thread: "1",
    ...where,
  },
  { id: "3", ts: T0 + 2, author: "cy", text: "old line" },
];

describe("segment message v1: the platform fields", () => {
  it("carries them inline and by reference, only where the message has them", async () => {
    const inline = parseSegmentBody(
      segmentBody(segment, messages, { maxBodyBytes: Infinity, tableName: TABLE }),
    );
    expect(inline.messages).toEqual(expected);
    const reference = parseSegmentBody(
      segmentBody(segment, messages, { maxBodyBytes: 300, tableName: TABLE }),
    );
    expect(reference.reference).toEqual({ table: TABLE });
    const source = { getMessages: async () => messages };
    expect(await readSegmentMessages(reference, source)).toEqual(expected);
  });

  it("reads a body written before them as before, and names a malformed one", () => {
    const body = JSON.parse(
      segmentBody(segment, messages, { maxBodyBytes: Infinity, tableName: TABLE }),
    );
    const bare = body.messages.map(({ id, ts, author, text }: Record<string, unknown>) => ({
      id,
      ts,
      author,
      text,
    }));
    const parsed = parseSegmentBody(JSON.stringify({ ...body, messages: bare }));
    expect(parsed.messages?.[1]).toEqual({
      id: "2",
      ts: T0 + 1,
      author: "bo",
      text: "right-click it",
    });
    for (const [field, value] of [
      ["replyTo", 1],
      ["userId", ""],
      ["channelName", null],
    ] as const) {
      const broken = structuredClone(body);
      broken.messages[1][field] = value;
      expect(() => parseSegmentBody(JSON.stringify(broken))).toThrow(
        `invalid segment message: messages[1].${field}: expected`,
      );
    }
  });
});
