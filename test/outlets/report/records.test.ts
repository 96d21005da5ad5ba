import { InvalidRecordError, parseCandidatesRecord, parseSegmentRecord } from "convoseg/report";
import { describe, expect, it } from "vitest";

const runLine = {
  channel: "help",
  segmentId: "s1",
  messageIds: ["a", "b"],
  late: true,
  belongsAfter: "s0",
  count: 2,
  first: { id: "a", ts: 1000 },
  last: { id: "b", ts: 2000 },
};

const problem = (parse: () => unknown) => {
  try {
    parse();
  } catch (error) {
    if (error instanceof InvalidRecordError) return error.message;
    throw error;
  }
  return "accepted";
};

describe("segment records", () => {
  it("reads what run --out writes", () => {
    expect(parseSegmentRecord(runLine)).toEqual({
      channel: "help",
      segmentId: "s1",
      messageIds: ["a", "b"],
      late: true,
      belongsAfter: "s0",
      first: { id: "a", ts: 1000 },
      last: { id: "b", ts: 2000 },
    });
  });

  it("reads what segment --json writes: bounds as times, no id, no lateness", () => {
    const line = {
      channel: "help",
      index: 2,
      first: "2025-03-07T11:00:00.000Z",
      last: "2025-03-07T11:07:00.000Z",
      count: 2,
      cut: "silence",
      gapBeforeMs: 273480000,
      messageIds: ["hel-010", "hel-011"],
    };
    expect(parseSegmentRecord(line)).toEqual({
      channel: "help",
      segmentId: "hel-010",
      messageIds: ["hel-010", "hel-011"],
      late: false,
      belongsAfter: null,
      first: { id: "hel-010", ts: Date.UTC(2025, 2, 7, 11) },
      last: { id: "hel-011", ts: Date.UTC(2025, 2, 7, 11, 7) },
    });
  });

  it("reads a thread's segment: the root's id, and its author and text as context", () => {
    const line = {
      ...runLine,
      thread: "r1",
      threadRoot: { id: "r1", ts: 5, author: "ana", text: "has anyone tried it?", userId: "U1" },
    };
    expect(parseSegmentRecord(line)).toMatchObject({
      thread: "r1",
      threadRoot: { author: "ana", text: "has anyone tried it?" },
    });
    expect(parseSegmentRecord({ ...runLine, thread: null })).not.toHaveProperty("thread");
  });

  it.each([
    [[], "segment: expected a JSON object (got an array of 0)"],
    [{ ...runLine, channel: " x" }, "channel: leading or trailing whitespace"],
    [
      { ...runLine, messageIds: [] },
      "messageIds: expected a non-empty array of message ids (got an array of 0)",
    ],
    [{ ...runLine, messageIds: ["a", 3] }, "messageIds[1]: expected a message id (got 3)"],
    [{ ...runLine, count: 3 }, "count: 3 but messageIds has 2"],
    [{ ...runLine, first: { id: "a", ts: "soon" } }, "first.ts:"],
    [{ ...runLine, last: { id: "b", ts: 10 } }, "last: is before first"],
    [{ ...runLine, late: "yes" }, 'late: expected a boolean (got "yes")'],
    [{ ...runLine, belongsAfter: 4 }, "belongsAfter: expected a segment id or null (got 4)"],
    [{ ...runLine, thread: 7 }, "thread: expected a message id (got 7)"],
    [{ ...runLine, threadRoot: "ana" }, 'threadRoot: expected a JSON object (got "ana")'],
    [{ ...runLine, threadRoot: { text: 3 } }, "threadRoot.text: expected a string (got 3)"],
  ])("names the field at fault in %j", (value, message) => {
    expect(problem(() => parseSegmentRecord(value))).toContain(message);
  });
});

describe("candidates records", () => {
  const line = {
    channel: "help",
    segmentId: "s1",
    late: false,
    model: "m",
    promptVersion: "1/sliding-60-6",
    candidates: [
      {
        id: "c1",
        topic: "grub",
        reason: "r",
        confidence: 0.5,
        tags: ["boot"],
        subjective: false,
        wikiWorthy: true,
        messageIds: ["a", "b"],
      },
      { topic: "bare" },
    ],
    usage: { calls: 3, inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
  };

  it("reads what run --candidates writes, with defaults for what a candidate leaves out", () => {
    expect(parseCandidatesRecord(line)).toEqual({
      channel: "help",
      segmentId: "s1",
      model: "m",
      promptVersion: "1/sliding-60-6",
      candidates: [
        {
          topic: "grub",
          reason: "r",
          confidence: 0.5,
          tags: ["boot"],
          subjective: false,
          wikiWorthy: true,
          messageIds: ["a", "b"],
        },
        { topic: "bare", reason: "", confidence: 0, tags: [], subjective: false, messageIds: null },
      ],
      usage: {
        calls: 3,
        inputTokens: 10,
        outputTokens: 2,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      },
    });
  });

  it.each([
    [{ ...line, model: 3 }, "model: expected a string (got 3)"],
    [{ ...line, candidates: {} }, "candidates: expected an array (got object)"],
    [{ ...line, candidates: [{ topic: " " }] }, "candidates[0].topic: expected a non-blank string"],
    [
      { ...line, candidates: [{ topic: "t", messageIds: ["a"] }] },
      "candidates[0].messageIds: expected [first, last] or null",
    ],
    [
      { ...line, candidates: [{ topic: "t", tags: [1] }] },
      "candidates[0].tags: expected an array of strings",
    ],
    [{ ...line, usage: { calls: -1 } }, "usage.calls: expected a count (got -1)"],
  ])("names the field at fault in %j", (value, message) => {
    expect(problem(() => parseCandidatesRecord(value))).toContain(message);
  });
});
