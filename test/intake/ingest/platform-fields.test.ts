import { MemoryStore } from "convoseg/history";
import { ingest } from "convoseg/ingest";
import { parseSegmentBody, segmentBody } from "convoseg/pipeline/contract";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const T = Date.UTC(2025, 2, 3, 8);
const where = { channel: "C1", platform: "slack", channelName: "general" };

describe("ingest: the platform fields", () => {
  it("stores userId, replyTo, thread, platform and channelName with the message", async () => {
    const store = new MemoryStore();
    const result = await ingest(store, [
      { id: "1", ts: T, user: "ana", userId: "U1", text: "how?", ...where },
      { id: "2", ts: T + 1, user: "bo", userId: 42, text: "so", replyTo: "1", thread: 1, ...where },
    ]);
    expect(result.stored).toEqual([0, 1]);
    const [root, reply] = await store.read("C1");
    expect(root).toMatchObject({
      author: "ana",
      userId: "U1",
      platform: "slack",
      channelName: "general",
    });
    expect(reply).toMatchObject({
      author: "bo",
      userId: "42",
      replyTo: "1",
      thread: "1",
      platform: "slack",
      channelName: "general",
    });
    expect(reply).not.toHaveProperty("channel");
  });

  it("rejects a malformed platform field by index and field, and stores the rest", async () => {
    const store = new MemoryStore();
    const result = await ingest(store, [
      { id: "1", ts: T, ...where, platform: "Slack Workspace" },
      { id: "2", ts: T, ...where, replyTo: { id: "1" } },
      { id: "3", ts: T, ...where, channelName: "" },
      { id: "4", ts: T, ...where },
    ]);
    expect(result.rejected.map(({ index, field }) => [index, field])).toEqual([
      [0, "platform"],
      [1, "replyTo"],
      [2, "channelName"],
    ]);
    expect(result.stored).toEqual([3]);
  });

  it("reports another userId, replyTo or thread as a conflict; a renamed channel is none", async () => {
    const store = new MemoryStore();
    const first = { id: "2", ts: T, user: "bo", userId: "U2", text: "so", replyTo: "1", ...where };
    await ingest(store, [first]);
    const result = await ingest(store, [
      { ...first, channelName: "general-renamed", platform: "slack" },
      { ...first, userId: "U3", replyTo: "0", thread: "0" },
      { ...first },
    ]);
    expect(result.unchanged).toEqual([0, 2]);
    expect(result.conflicts).toEqual([{ index: 1, fields: ["userId", "replyTo", "thread"] }]);
    expect((await store.read("C1"))[0]).toMatchObject({ userId: "U2", channelName: "general" });
  });

  it("keeps any well-formed platform fields from input line to segment body (property)", async () => {
    const text = fc.string({ minLength: 1, maxLength: 20 }).filter((t) => t.isWellFormed());
    const fields = fc.record(
      {
        userId: text,
        replyTo: text.filter((t) => t !== "m"),
        thread: text,
        platform: fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,31}$/),
        channelName: text,
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fields, async (given) => {
        const store = new MemoryStore();
        const result = await ingest(store, [{ id: "m", ts: T, channel: "c", text: "x", ...given }]);
        expect(result.stored).toEqual([0]);
        const stored = await store.read("c");
        const segment = {
          segmentId: "c:m",
          channel: "c",
          messages: [{ id: "m", ts: T }],
          late: false,
          belongsAfter: null,
        };
        const body = segmentBody(segment, stored, { maxBodyBytes: Infinity, tableName: "t" });
        expect(parseSegmentBody(body).messages?.[0]).toEqual({
          id: "m",
          ts: T,
          text: "x",
          ...given,
        });
      }),
    );
  });
});
