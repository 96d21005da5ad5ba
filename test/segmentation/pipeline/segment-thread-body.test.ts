/**
 * A thread's segment body (issue 24 §1, additive within v1): `thread` names the root, and
 * `threadRoot` carries it as context, not as one of the segment's messages; the reference form
 * keeps the root when it fits and goes without it rather than not at all.
 */

import { textMessage } from "convoseg/history";
import type { PlannedSegment } from "convoseg/pipeline";
import { parseSegmentBody, readThreadRoot, segmentBody } from "convoseg/pipeline/contract";
import { describe, expect, it } from "vitest";

const T0 = 1_700_000_000_000;
const root = textMessage("user", 'root "text"\n', { id: "r", ts: T0, author: "ana" });
const reply = textMessage("user", "an answer", { id: "t1", ts: T0 + 1, thread: "r" });
const segment: PlannedSegment = {
  segmentId: "s1",
  channel: "help",
  messages: [{ id: "t1", ts: T0 + 1 }],
  late: false,
  belongsAfter: null,
  thread: "r",
};
const options = { maxBodyBytes: 256 * 1024, tableName: "history" };

describe("a thread segment's body", () => {
  it("names its thread and carries the root apart from its messages", () => {
    const body = parseSegmentBody(segmentBody(segment, [reply], options, root));
    expect(body.thread).toBe("r");
    expect(body.threadRoot).toEqual({ id: "r", ts: T0, author: "ana", text: 'root "text"\n' });
    expect(body.messageIds).toEqual(["t1"]);
    expect(body.count).toBe(1);
  });

  it("writes neither field for the channel's own stream", () => {
    const { thread: _thread, ...own } = segment;
    const text = segmentBody(own, [reply], options, root);
    expect(text).not.toContain("threadRoot");
    expect(parseSegmentBody(text).thread).toBeUndefined();
  });

  it("keeps the root in the reference form when it fits, else goes without it", () => {
    const big = textMessage("user", "x".repeat(20_000), { id: "t1", ts: T0 + 1, thread: "r" });
    const small = { maxBodyBytes: 16_384, tableName: "history" };
    const withRoot = parseSegmentBody(segmentBody(segment, [big], small, root));
    expect(withRoot.reference).toEqual({ table: "history" });
    expect(withRoot.threadRoot?.id).toBe("r");
    const bigRoot = textMessage("user", "y".repeat(20_000), { id: "r", ts: T0 });
    const without = parseSegmentBody(segmentBody(segment, [big], small, bigRoot));
    expect(without.thread).toBe("r");
    expect(without.threadRoot).toBeUndefined();
  });

  it("refuses a threadRoot without thread, or one that is not the thread's root", () => {
    const body = JSON.parse(segmentBody(segment, [reply], options, root));
    const { thread: _t, ...noThread } = body;
    expect(() => parseSegmentBody(JSON.stringify(noThread))).toThrow(/threadRoot/);
    const wrong = { ...body, threadRoot: { ...body.threadRoot, id: "other" } };
    expect(() => parseSegmentBody(JSON.stringify(wrong))).toThrow(
      "threadRoot.id: expected r (thread)",
    );
  });

  it("reads a root the body had no room for from the store, as it is now", async () => {
    const body = parseSegmentBody(
      segmentBody(segment, [reply], { maxBodyBytes: 16_384, tableName: "h" }),
    );
    const source = {
      getMessages: async (_c: string, ids: readonly string[]) => (ids[0] === "r" ? [root] : []),
    };
    expect((await readThreadRoot(body, source))?.text).toBe('root "text"\n');
    const gone = { getMessages: async () => [] };
    expect(await readThreadRoot(body, gone)).toBeUndefined();
  });
});
