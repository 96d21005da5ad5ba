import { buildReport, NOT_IN_INPUT, THREAD_EXCERPT } from "convoseg/report";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { excerptOf } from "../../../lib/outlets/report/threads.js";
import {
  ROOT_AUTHOR,
  THREAD_MESSAGES,
  THREAD_NOW,
  THREAD_SEGMENTS,
  THREAD_T0,
} from "./thread-fixtures.js";

const report = (withMessages: boolean) =>
  buildReport({
    segments: THREAD_SEGMENTS,
    ...(withMessages ? { messages: THREAD_MESSAGES } : {}),
    settle: 24 * 3_600_000,
    now: THREAD_NOW,
    generatedAt: THREAD_T0,
  }).data.channels[0];

describe("report data: threads", () => {
  it("makes a thread of the segments whose line names it, or whose messages all reply in it", () => {
    const channel = report(true);
    expect(channel.segments.map((s) => s.thread)).toEqual([undefined, 0, 1, 2, 0]);
    expect(channel.segments[0]).not.toHaveProperty("thread");
    expect(channel.threads).toEqual([
      {
        root: "r1",
        author: ROOT_AUTHOR,
        // The root's text from the input, on one line and cut at a word.
        excerpt: "has anyone </tr></table><script>window.__pwned =…",
        segments: [1, 4],
      },
      {
        root: "r9",
        author: "eve",
        excerpt: "is the staging database down again, or is it just me being…",
        segments: [2],
      },
      // Neither the input nor a line has the root: the page names it by its id.
      { root: "r8", segments: [3] },
    ]);
  });

  it("without the messages, knows only the threads the segment lines name", () => {
    const channel = report(false);
    expect(channel.segments.map((s) => s.thread)).toEqual([undefined, undefined, 0, undefined, 1]);
    expect(channel.threads).toEqual([
      {
        root: "r9",
        author: "eve",
        excerpt: "is the staging database down again, or is it just me being…",
        segments: [2],
      },
      { root: "r1", segments: [4] },
    ]);
  });

  it("measures a thread's cuts within the thread, and the channel's without its threads", () => {
    const channel = buildReport({
      segments: THREAD_SEGMENTS,
      messages: THREAD_MESSAGES,
      settle: 10 * 60_000,
      now: THREAD_NOW,
      generatedAt: THREAD_T0,
    }).data.channels[0];
    expect(channel.segments.map((s) => [s.cut, s.gapMs])).toEqual([
      ["start", null],
      // Each thread starts its own stream, whatever the channel said before it.
      ["start", null],
      ["start", null],
      ["start", null],
      // From t2, r1's last reply before it: 27 minutes, over the settle.
      ["silence", 27 * 60_000],
    ]);
    const without = buildReport({
      segments: THREAD_SEGMENTS,
      settle: 10 * 60_000,
      now: THREAD_NOW,
      generatedAt: THREAD_T0,
    }).data.channels[0];
    // Without the messages only s2 and s4 are known threads, each its stream's first segment.
    expect([without.segments[2].cut, without.segments[4].cut]).toEqual(["start", "start"]);
    expect(without.segments[3].gapMs).toBe(3 * 60_000);
  });

  it("a segment of a thread's replies and a channel message is the channel's own", () => {
    const mixed = THREAD_SEGMENTS.map((s) =>
      s.segmentId === "s1" ? { ...s, messageIds: ["t1", "t2", "v1"] } : s,
    ).filter((s) => s.segmentId !== "s3");
    const channel = buildReport({
      segments: mixed,
      messages: THREAD_MESSAGES,
      settle: 24 * 3_600_000,
      now: THREAD_NOW,
      generatedAt: THREAD_T0,
    }).data.channels[0];
    expect(channel.segments.map((s) => s.thread)).toEqual([undefined, undefined, 0, 1]);
    expect(channel.threads.map((t) => [t.root, t.segments])).toEqual([
      ["r9", [2]],
      ["r1", [3]],
    ]);
  });

  it("tells a reply to a message the input lacks from a message that answers none", () => {
    const { messages } = report(true);
    // r1 c2 t1 t2 c3 u1 v1 t3 in channel order: c3 answers r0, u1 and v1 roots nobody has.
    expect(messages?.replyTo).toEqual([-1, -1, 0, 2, NOT_IN_INPUT, NOT_IN_INPUT, NOT_IN_INPUT, 0]);
  });

  it("cuts an excerpt to at most its length, on one line, from the text's start", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 200 }), (text) => {
        const excerpt = excerptOf(text);
        const flat = text.replace(/\s+/g, " ").trim();
        expect([...excerpt].length).toBeLessThanOrEqual(THREAD_EXCERPT);
        expect(excerpt).not.toMatch(/[\n\r\t]/);
        if (excerpt === flat) return;
        expect(excerpt.endsWith("…")).toBe(true);
        expect(flat.startsWith(excerpt.slice(0, -1))).toBe(true);
      }),
    );
  });
});
