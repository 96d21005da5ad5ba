import { type Message, messageText, textMessage } from "convoseg/history";
import type { PlannedSegment } from "convoseg/pipeline";
import {
  DEFAULT_MAX_BODY_BYTES,
  InvalidSegmentMessageError,
  isSqsBody,
  MissingSegmentMessagesError,
  parseSegmentBody,
  readSegmentMessages,
  type SegmentMessageSource,
  type SegmentMessageV1,
  SegmentTooLargeError,
  segmentBody,
} from "convoseg/pipeline/contract";
import { describe, expect, it } from "vitest";

const T0 = 1_700_000_000_000;
const TABLE = "history";

function chatMessages(count: number, text = (i: number) => `message ${i} é😀`): Message[] {
  return Array.from({ length: count }, (_, i) =>
    textMessage("user", text(i), { id: `m${i}`, ts: T0 + i * 1_000, author: `user${i % 3}` }),
  );
}

function segmentOf(messages: Message[], fields: Partial<PlannedSegment> = {}): PlannedSegment {
  return {
    segmentId: "general:m0",
    channel: "general",
    messages: messages.map((m) => ({ id: m.id as string, ts: m.ts as number })),
    late: false,
    belongsAfter: null,
    ...fields,
  };
}

/** The inline body's exact UTF-8 size: the smallest limit at which it is still inline. */
function inlineBytes(segment: PlannedSegment, messages: Message[]): number {
  const body = segmentBody(segment, messages, { maxBodyBytes: Infinity, tableName: TABLE });
  return Buffer.byteLength(body, "utf8");
}

/** A source that serves what it holds and records what it was asked. */
function fakeSource(messages: Message[]) {
  const calls: { channel: string; ids: readonly string[] }[] = [];
  const source: SegmentMessageSource = {
    async getMessages(channel, ids) {
      calls.push({ channel, ids });
      return ids.flatMap((id) => messages.filter((m) => m.id === id));
    },
  };
  return { source, calls };
}

describe("segmentBody", () => {
  it("goes inline exactly when the UTF-8 body fits the limit, else by reference", () => {
    const messages = chatMessages(5);
    const segment = segmentOf(messages);
    const limit = inlineBytes(segment, messages);

    const inline = parseSegmentBody(
      segmentBody(segment, messages, { maxBodyBytes: limit, tableName: TABLE }),
    );
    expect(inline.messages?.map((m) => m.text)).toEqual(messages.map((m) => messageText(m)));
    expect(inline.reference).toBeUndefined();

    const body = segmentBody(segment, messages, { maxBodyBytes: limit - 1, tableName: TABLE });
    const reference = parseSegmentBody(body);
    expect(reference.messages).toBeUndefined();
    expect(reference.reference).toEqual({ table: TABLE });
    expect(Buffer.byteLength(body, "utf8")).toBeLessThan(limit);
  });

  it("carries the segment's identity, bounds and ids in both forms", () => {
    const messages = chatMessages(3);
    const segment = segmentOf(messages, {
      segmentId: "general:late:m0",
      late: true,
      belongsAfter: "general:earlier",
    });
    const envelope = {
      v: 1,
      segmentId: "general:late:m0",
      channel: "general",
      late: true,
      belongsAfter: "general:earlier",
      count: 3,
      first: { id: "m0", ts: T0 },
      last: { id: "m2", ts: T0 + 2_000 },
      messageIds: ["m0", "m1", "m2"],
    };
    const inline = JSON.parse(
      segmentBody(segment, messages, { maxBodyBytes: DEFAULT_MAX_BODY_BYTES, tableName: TABLE }),
    );
    expect(inline).toEqual({
      ...envelope,
      messages: messages.map((m) => ({
        id: m.id,
        ts: m.ts,
        author: m.author,
        text: expect.any(String),
      })),
    });
    const reference = JSON.parse(
      segmentBody(segment, messages, { maxBodyBytes: 400, tableName: TABLE }),
    );
    expect(reference).toEqual({ ...envelope, reference: { table: TABLE } });
  });

  it("throws, naming the segment, when not even the reference form fits", () => {
    const messages = chatMessages(50);
    const segment = segmentOf(messages, { segmentId: "general:huge" });
    const call = () => segmentBody(segment, messages, { maxBodyBytes: 300, tableName: TABLE });
    expect(call).toThrow(SegmentTooLargeError);
    expect(call).toThrow(
      /segment general:huge: even its reference form takes \d+ bytes, over the 300-byte/,
    );
  });

  it("refuses messages that are not the segment's, in its order", () => {
    const messages = chatMessages(3);
    const segment = segmentOf(messages);
    const options = { maxBodyBytes: DEFAULT_MAX_BODY_BYTES, tableName: TABLE };
    expect(() => segmentBody(segment, messages.slice().reverse(), options)).toThrow(
      /messages\[0\] has id m2, expected m0/,
    );
    expect(() => segmentBody(segment, messages.slice(1), options)).toThrow(
      /got 2 messages for 3 refs/,
    );
  });
});

describe("readSegmentMessages", () => {
  it("returns inline messages without touching the source", async () => {
    const messages = chatMessages(4);
    const { source, calls } = fakeSource([]);
    const segment = parseSegmentBody(
      segmentBody(segmentOf(messages), messages, {
        maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
        tableName: TABLE,
      }),
    );
    const read = await readSegmentMessages(segment, source);
    expect(read.map((m) => m.id)).toEqual(["m0", "m1", "m2", "m3"]);
    expect(calls).toEqual([]);
  });

  it("fetches a reference-form segment's messages in segment order", async () => {
    const messages = chatMessages(4);
    const { source, calls } = fakeSource(messages.slice().reverse());
    const body = segmentBody(segmentOf(messages), messages, {
      maxBodyBytes: 400,
      tableName: TABLE,
    });
    const segment = parseSegmentBody(body);
    const read = await readSegmentMessages(segment, source);
    expect(calls).toEqual([{ channel: "general", ids: ["m0", "m1", "m2", "m3"] }]);
    expect(read).toEqual(
      messages.map((m) => ({ id: m.id, ts: m.ts, author: m.author, text: messageText(m) })),
    );
    const inline = parseSegmentBody(
      segmentBody(segmentOf(messages), messages, {
        maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
        tableName: TABLE,
      }),
    );
    expect(read).toEqual(inline.messages);
  });

  it("carries each message's kind inline and by reference; a person's message has none", async () => {
    const messages = [
      textMessage("user", "ana has joined", { id: "m0", ts: T0, kind: "system" }),
      textMessage("user", "build ok", { id: "m1", ts: T0 + 1, author: "ci", kind: "bot" }),
      textMessage("user", "hi", { id: "m2", ts: T0 + 2, author: "ana" }),
    ];
    const expected = [
      { id: "m0", ts: T0, text: "ana has joined", kind: "system" },
      { id: "m1", ts: T0 + 1, author: "ci", text: "build ok", kind: "bot" },
      { id: "m2", ts: T0 + 2, author: "ana", text: "hi" },
    ];
    const inline = parseSegmentBody(
      segmentBody(segmentOf(messages), messages, { maxBodyBytes: Infinity, tableName: TABLE }),
    );
    expect(inline.messages).toEqual(expected);
    const reference = parseSegmentBody(
      segmentBody(segmentOf(messages), messages, { maxBodyBytes: 300, tableName: TABLE }),
    );
    expect(reference.reference).toEqual({ table: TABLE });
    expect(await readSegmentMessages(reference, fakeSource(messages).source)).toEqual(expected);
  });

  it("leaves out a reference-form segment's messages deleted since it was sent", async () => {
    const messages = chatMessages(3);
    const stored = [
      messages[0],
      { ...messages[1], parts: [], deleted: true as const },
      messages[2],
    ];
    const body = segmentBody(segmentOf(messages), messages, {
      maxBodyBytes: 400,
      tableName: TABLE,
    });
    const read = await readSegmentMessages(parseSegmentBody(body), fakeSource(stored).source);
    expect(read.map((m) => m.id)).toEqual(["m0", "m2"]);
  });

  it("throws, naming the missing ids, when the source lacks any", async () => {
    const messages = chatMessages(4);
    const { source } = fakeSource([messages[0], messages[2]] as Message[]);
    const body = segmentBody(segmentOf(messages), messages, {
      maxBodyBytes: 400,
      tableName: TABLE,
    });
    const read = readSegmentMessages(parseSegmentBody(body), source);
    await expect(read).rejects.toThrow(MissingSegmentMessagesError);
    await expect(read).rejects.toThrow("segment general:m0: 2 message(s) not found: m1, m3");
  });
});

describe("parseSegmentBody", () => {
  const messages = chatMessages(2);
  const valid = (): Record<string, unknown> =>
    JSON.parse(
      segmentBody(segmentOf(messages), messages, {
        maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
        tableName: TABLE,
      }),
    );
  const parse = (value: unknown) => () =>
    parseSegmentBody(typeof value === "string" ? value : JSON.stringify(value));

  it("reads an inline message's kind, and refuses one that is not user, bot or system", () => {
    const body = valid();
    const [first, second] = body.messages as Record<string, unknown>[];
    const kinds = parseSegmentBody(
      JSON.stringify({
        ...body,
        messages: [
          { ...first, kind: "system" },
          { ...second, kind: "user" },
        ],
      }),
    );
    expect(kinds.messages?.map((m) => m.kind)).toEqual(["system", "user"]);
    expect(parse({ ...body, messages: [{ ...first, kind: "robot" }, second] })).toThrow(
      "invalid segment message: messages[0].kind: expected one of user, bot, system",
    );
  });

  it("keeps the known fields and drops unknown ones", () => {
    const parsed: SegmentMessageV1 = parseSegmentBody(JSON.stringify({ ...valid(), extra: 1 }));
    expect(parsed).toEqual(valid());
  });

  it.each([
    ["not JSON", "{", /body: not JSON/],
    ["an array", [], /body: expected an object/],
    [
      "a later version",
      { ...valid(), v: 2 },
      /v: version 2 is not supported; this reader understands version 1/,
    ],
    ["no version", { ...valid(), v: undefined }, /v: expected the version number 1/],
    ["a count that disagrees", { ...valid(), count: 3 }, /count: expected 2/],
    [
      "no message ids",
      { ...valid(), messageIds: [], count: 0 },
      /messageIds: a segment has at least one message/,
    ],
    [
      "an empty segment id",
      { ...valid(), segmentId: "" },
      /segmentId: expected a non-empty string/,
    ],
    ["a non-boolean late", { ...valid(), late: "no" }, /late: expected a boolean/],
    [
      "a channel ingestion refuses (terminal control, bidi override)",
      { ...valid(), channel: "\x1b[2J\u202echan" },
      /channel: contains control character U\+001B/,
    ],
    [
      "a channel with trailing whitespace",
      { ...valid(), channel: "chan " },
      /channel: leading or trailing whitespace/,
    ],
    [
      "a message id with a lone surrogate",
      { ...valid(), messageIds: ["m0", "m\ud800"] },
      /messageIds\[1\]: invalid UTF-16/,
    ],
    [
      "a first bound off the ids",
      { ...valid(), first: { id: "m1", ts: T0 } },
      /first.id: expected m0/,
    ],
    [
      "a last ts that is not a number",
      { ...valid(), last: { id: "m1", ts: "x" } },
      /last.ts: expected epoch milliseconds/,
    ],
    [
      "both messages and reference",
      { ...valid(), reference: { table: TABLE } },
      /expected exactly one of messages, reference/,
    ],
    [
      "neither messages nor reference",
      { ...valid(), messages: undefined },
      /expected exactly one of messages, reference/,
    ],
    [
      "an empty reference table",
      { ...valid(), messages: undefined, reference: { table: "" } },
      /reference.table: expected a non-empty string/,
    ],
    [
      "inline messages out of order",
      { ...valid(), messages: (valid().messages as unknown[]).reverse() },
      /messages\[0\].id: expected m0/,
    ],
    [
      "an inline message without text",
      {
        ...valid(),
        messages: [
          { id: "m0", ts: T0 },
          { id: "m1", ts: T0 },
        ],
      },
      /messages\[0\].text: expected a string/,
    ],
  ])("rejects %s", (_name, value, error) => {
    expect(parse(value)).toThrow(InvalidSegmentMessageError);
    expect(parse(value)).toThrow(error);
  });
});

describe("bodies SQS accepts", () => {
  const awkward = "a\ufffeb\uffffc\u0000d\u0007e\u001b[0m \ud83d\ude00 f";

  it("escapes the characters SQS refuses and reads them back unchanged", () => {
    const messages = chatMessages(3, (i) => `${awkward} ${i}`);
    const body = segmentBody(segmentOf(messages), messages, {
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      tableName: TABLE,
    });
    expect(isSqsBody(body)).toBe(true);
    expect(body).toContain("\\ufffe");
    expect(parseSegmentBody(body).messages?.map((m) => m.text)).toEqual(
      messages.map((m) => messageText(m)),
    );
  });

  it("tells the bodies SQS refuses", () => {
    expect(isSqsBody("plain text, tabs\tand\nnewlines\r\n, 😀")).toBe(true);
    for (const bad of ["\ufffe", "\uffff", "\u0000", "\u0008", "\ud800", "x\udc00"]) {
      expect(isSqsBody(`ok ${bad}`)).toBe(false);
    }
    expect(isSqsBody(JSON.stringify({ text: awkward }))).toBe(false);
  });
});
