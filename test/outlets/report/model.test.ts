import { buildReport, DROPPED, OPEN, type ReportInput, sizeDistribution } from "convoseg/report";
import { describe, expect, it } from "vitest";
import {
  ALL_MESSAGES,
  CANDIDATES,
  HOUR,
  MINUTE,
  NOW,
  OPS,
  SEGMENTS,
  SETTLE,
  T0,
} from "./fixtures.js";

const input: ReportInput = {
  segments: SEGMENTS,
  candidates: CANDIDATES,
  messages: ALL_MESSAGES,
  settle: SETTLE,
  now: NOW,
  generatedAt: NOW,
};

const cuts = (report: ReturnType<typeof buildReport>, channel: string) =>
  report.data.channels
    .find((c) => c.name === channel)
    ?.segments.map(({ id, cut, gapMs, belongsAfter }) => ({ id, cut, gapMs, belongsAfter }));

describe("report data", () => {
  it("labels each cut with its cause and the silence it fell in, passing over late messages", () => {
    const report = buildReport(input);
    expect(report.data.channels.map((c) => c.name)).toEqual([OPS, "help"]);
    expect(cuts(report, "help")).toEqual([
      { id: "seg-h1", cut: "start", gapMs: null, belongsAfter: null },
      // From h04, not from the late message a minute before h05.
      { id: "seg-h2", cut: "silence", gapMs: 3 * HOUR - 3 * MINUTE, belongsAfter: null },
      { id: "seg-late", cut: "late", gapMs: null, belongsAfter: 0 },
      { id: "seg-h3", cut: "size", gapMs: 10 * MINUTE, belongsAfter: null },
    ]);
    expect(cuts(report, OPS)).toEqual([
      { id: "seg-o1", cut: "start", gapMs: null, belongsAfter: null },
    ]);
  });

  it("without the messages, measures each gap from the previous segment's last message", () => {
    const report = buildReport({ ...input, messages: undefined });
    expect(cuts(report, "help")).toEqual([
      { id: "seg-h1", cut: "start", gapMs: null, belongsAfter: null },
      { id: "seg-h2", cut: "silence", gapMs: 3 * HOUR - 3 * MINUTE, belongsAfter: null },
      { id: "seg-late", cut: "late", gapMs: null, belongsAfter: 0 },
      { id: "seg-h3", cut: "size", gapMs: 10 * MINUTE, belongsAfter: null },
    ]);
    const help = report.data.channels[1];
    expect(help.messages).toBeNull();
    expect(help.segments[0].messageIds).toEqual(["h01", "h02", "h03", "h04"]);
    expect(report.data.summary.messages).toBeNull();
  });

  it("tells messages still open (the trailing conversation, unsettled) from those in no segment", () => {
    const report = buildReport(input);
    const [ops, help] = report.data.channels;
    expect(ops.messages?.id).toEqual(["o1", "o2", "o3"]);
    expect(ops.messages?.segment).toEqual([0, 0, OPEN]);
    // Channel order is by timestamp: the late message sits between h04 and h05.
    expect(help.messages?.id.slice(3, 6)).toEqual(["h04", "h-late", "h05"]);
    expect(help.messages?.segment.slice(3, 6)).toEqual([0, 2, 1]);
    expect(help.messages?.segment.at(-1)).toBe(DROPPED);
    expect(help.counts).toMatchObject({
      messages: 12,
      segments: 4,
      lateSegments: 1,
      open: 0,
      dropped: 1,
    });
    expect(ops.counts).toMatchObject({ open: 1, dropped: 0 });
    // Once the ops conversation has settled, its last message is in no segment either.
    const later = buildReport({ ...input, now: NOW + 2 * SETTLE });
    expect(later.data.channels[0].counts).toMatchObject({ open: 0, dropped: 1 });
  });

  it("keeps times as deltas, users interned and texts apart, in channel order", () => {
    const { data, texts } = buildReport(input);
    const ops = data.channels[0].messages;
    expect(ops?.tsDelta).toEqual([T0 + 12 * HOUR, MINUTE, MINUTE]);
    expect(ops?.users).toEqual(["<b>mallory</b>", "eve"]);
    expect(ops?.user).toEqual([0, 1, 1]);
    expect(texts[0]).toEqual(ALL_MESSAGES.filter((m) => m.channel === OPS).map((m) => m.text));
    expect(texts[1][4]).toBe("sorry, late reply");
  });

  it("maps evidence to indexes into the segment's messages and sums what extraction cost", () => {
    const { data } = buildReport(input);
    const seg = data.channels[1].segments[1];
    expect(seg.extraction?.topics.map((t) => [t.topic, t.range])).toEqual([
      ["wifi driver", [1, 2]],
      ["firmware", null],
    ]);
    expect(seg.extraction?.topics[0]).toMatchObject({ wikiWorthy: true, tags: ["networking"] });
    // The late segment was not extracted.
    expect(data.channels[1].segments[2].extraction).toBeNull();
    expect(data.summary.extraction).toEqual({
      segments: 4,
      topics: 6,
      usage: {
        calls: 5,
        inputTokens: 260,
        outputTokens: 50,
        cacheReadTokens: 80,
        cacheWriteTokens: 0,
      },
      models: ["test-model"],
      promptVersions: ["1/sliding-60-6"],
      unmatched: 1,
    });
  });

  it("lists each channel's topics, merged over its segments, with their support and when", () => {
    const { data } = buildReport(input);
    const [ops, help] = data.channels;
    expect(help.topics).toEqual([
      {
        // Said best by seg-h2 (0.8) and again by seg-h3 as "Wifi  Driver".
        topic: "wifi driver",
        aliases: [],
        supports: [
          [1, 0],
          [3, 0],
        ],
        // From h06 (its range in seg-h2) to h10 (its range in seg-h3).
        first: T0 + 3 * HOUR + MINUTE,
        last: T0 + 3 * HOUR + 14 * MINUTE,
        bestConfidence: 0.8,
      },
      {
        topic: "grub bootloader",
        aliases: [],
        supports: [[0, 0]],
        first: T0,
        last: T0 + 3 * MINUTE,
        bestConfidence: 0.9,
      },
      {
        topic: "firmware update",
        aliases: [],
        supports: [[3, 1]],
        first: T0 + 3 * HOUR + 13 * MINUTE,
        last: T0 + 3 * HOUR + 13 * MINUTE,
        bestConfidence: 0.5,
      },
      {
        // No range: the bounds of its segment, seg-h2.
        topic: "firmware",
        aliases: [],
        supports: [[1, 1]],
        first: T0 + 3 * HOUR,
        last: T0 + 3 * HOUR + 3 * MINUTE,
        bestConfidence: 0.4,
      },
    ]);
    expect(ops.topics.map((t) => t.topic)).toEqual([`<img src=x onerror="window.__pwned = 3">`]);
    // Without the messages, evidence is dated by its segment.
    const alone = buildReport({ ...input, messages: undefined }).data.channels[1].topics;
    expect(alone[0]).toMatchObject({ first: T0 + 3 * HOUR, last: T0 + 3 * HOUR + 14 * MINUTE });
    expect(buildReport({ ...input, candidates: undefined }).data.channels[1].topics).toEqual([]);
  });

  it("counts a segment once for a topic it names twice", () => {
    const twice = CANDIDATES.map((line) =>
      line.segmentId === "seg-h2"
        ? {
            ...line,
            candidates: [...line.candidates, { ...line.candidates[0], topic: "WIFI driver" }],
          }
        : line,
    );
    const help = buildReport({ ...input, candidates: twice }).data.channels[1];
    expect(help.topics[0]).toMatchObject({
      topic: "wifi driver",
      supports: [
        [1, 0],
        [3, 0],
      ],
    });
  });

  it("merges a topic's wordings into one, named by the most supported, its aliases kept as text", () => {
    const hostile = "WiFi & <drivers>";
    const worded = CANDIDATES.map((line) =>
      line.segmentId === "seg-h1"
        ? {
            ...line,
            candidates: [
              ...line.candidates,
              { ...line.candidates[0], topic: "Wi-Fi drivers" },
              { ...line.candidates[0], topic: hostile },
            ],
          }
        : line,
    );
    const help = buildReport({ ...input, candidates: worded }).data.channels[1];
    expect(help.topics[0]).toMatchObject({
      topic: "wifi driver",
      aliases: ["Wi-Fi drivers", hostile],
      // seg-h1 says two of the wordings: it supports the topic once.
      supports: [
        [0, 1],
        [1, 0],
        [3, 0],
      ],
    });
    expect(help.topics.map((t) => t.topic)).not.toContain("Wi-Fi drivers");
  });

  it("sums up channels, segments, late, open and dropped messages and the sizes", () => {
    const { summary } = buildReport(input).data;
    expect(summary).toMatchObject({
      channels: 2,
      messages: 15,
      segments: 5,
      lateSegments: 1,
      lateMessages: 1,
      inSegments: 13,
      open: 1,
      dropped: 1,
      missing: 0,
    });
    expect(summary.sizes).toEqual({
      buckets: [
        { from: 1, to: 1, segments: 1 },
        { from: 2, to: 3, segments: 2 },
        { from: 4, to: 7, segments: 2 },
      ],
      min: 1,
      median: 2,
      p90: 4,
      max: 4,
    });
  });

  it("counts segment messages the input does not have", () => {
    const { data } = buildReport({
      ...input,
      messages: ALL_MESSAGES.filter((m) => m.id !== "h02"),
    });
    expect(data.channels[1].segments[0]).toMatchObject({ count: 4, missing: 1 });
    expect(data.summary.missing).toBe(1);
  });

  it("has no size distribution without segments, and no extraction without candidates", () => {
    const { summary } = buildReport({ ...input, segments: [], candidates: undefined }).data;
    expect(summary.sizes).toBeNull();
    expect(summary.extraction).toBeNull();
    expect(sizeDistribution([500, 1, 3])?.buckets).toHaveLength(9);
  });
});
