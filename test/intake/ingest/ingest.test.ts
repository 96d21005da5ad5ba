import { MemoryStore, textMessage, WriteError } from "convoseg/history";
import { SequenceAllocator } from "convoseg/history/positions";
import { type IngestStore, ingest } from "convoseg/ingest";
import { describe, expect, it } from "vitest";

/** The edits and deletions of `store`, for a test's writer of its own. */
const editing = (store: MemoryStore) => ({
  change: store.change.bind(store),
  settle: store.settle.bind(store),
});

const T = Date.UTC(2025, 2, 3, 8);

describe("ingest", () => {
  it("stores valid messages per channel and reports invalid ones by index and field", async () => {
    const store = new MemoryStore();
    const result = await ingest(store, [
      { id: "1", ts: T, channel: "help", user: "ana", text: "hi" },
      { id: "2", ts: "yesterday", channel: "help" },
      { id: 3, ts: new Date(T + 1000).toISOString(), channel: "dev", user: null },
      "not an object",
      { id: "4", ts: T + 2000, channel: " padded" },
    ]);
    expect(result).toEqual({
      stored: [0, 2],
      unchanged: [],
      conflicts: [],
      rejected: [
        { index: 1, field: "ts", problem: expect.stringContaining("ISO-8601") },
        { index: 3, field: "message", problem: expect.stringContaining("JSON object") },
        {
          index: 4,
          field: "channel",
          problem: expect.stringContaining("leading or trailing whitespace"),
        },
      ],
      failed: [],
      deleted: [],
      changes: [],
      refused: [],
    });
    expect(await store.read("help")).toEqual([
      textMessage("user", "hi", { id: "1", ts: T, author: "ana" }),
    ]);
    expect(await store.read("dev")).toEqual([textMessage("user", "", { id: "3", ts: T + 1000 })]);
  });

  it("refuses a message dated more than a day after its clock (2286, 5138), live and imported alike", async () => {
    const store = new MemoryStore();
    const now = Date.UTC(2026, 11, 6, 12);
    const result = await ingest(
      store,
      [
        { id: "skew", ts: now + 23 * 3_600_000, channel: "c", text: "clock skew is fine" },
        { id: "2286", ts: "2286-11-20T17:46:40Z", channel: "c", text: "broken clock" },
        { id: "5138", ts: 99_999_999_999_999, channel: "c", text: "seconds read as ms" },
      ],
      { now: () => now },
    );
    expect(result.stored).toEqual([0]);
    expect(result.rejected).toEqual([
      {
        index: 1,
        field: "ts",
        problem:
          "2286-11-20T17:46:40.000Z is more than a day after this machine's clock (2026-12-06T12:00:00.000Z): a wrong clock or a broken export, not chat",
      },
      {
        index: 2,
        field: "ts",
        problem: expect.stringMatching(/^5138-11-16T09:46:39\.999Z is more/),
      },
    ]);
  });

  it("is idempotent: ingesting the same messages again changes nothing and says so", async () => {
    const store = new MemoryStore();
    const batch = [
      { id: "a", ts: T, channel: "c", text: "one" },
      { id: "b", ts: T + 1, channel: "c", text: "two" },
    ];
    await ingest(store, batch);
    const again = await ingest(store, batch);
    expect(again).toMatchObject({ stored: [], unchanged: [0, 1], conflicts: [] });
    expect(await store.read("c")).toHaveLength(2);
  });

  it("reports a re-sent id with other text, time or author as a conflict and keeps the first", async () => {
    const store = new MemoryStore();
    await ingest(store, [{ id: "a", ts: T, channel: "c", user: "ana", text: "one" }]);
    const edited = await ingest(store, [
      { id: "a", ts: T + 5, channel: "c", user: "bo", text: "one, edited" },
      { id: "a", ts: T, channel: "c", user: "ana", text: "one" },
      { id: "b", ts: T, channel: "c", text: "two" },
      { id: "b", ts: T, channel: "c", text: "two again" },
    ]);
    expect(edited).toMatchObject({
      stored: [2],
      unchanged: [1],
      conflicts: [
        { index: 0, fields: ["ts", "text", "user"] },
        { index: 3, fields: ["text"] },
      ],
    });
    expect((await store.read("c")).map((m) => [m.id, m.ts, m.author])).toEqual([
      ["a", T, "ana"],
      ["b", T, undefined],
    ]);
  });

  it("stores a line's kind (kind, or system: true), none for a person's, and a changed kind is a conflict", async () => {
    const store = new MemoryStore();
    const result = await ingest(store, [
      { id: "j", ts: T, channel: "c", user: null, text: "ana has joined", system: true },
      { id: "b", ts: T + 1, channel: "c", user: "ci", text: "build ok", kind: "bot" },
      { id: "u", ts: T + 2, channel: "c", user: "ana", text: "hi", kind: "user", system: false },
      { id: "x", ts: T + 3, channel: "c", kind: "robot" },
    ]);
    expect(result).toMatchObject({
      stored: [0, 1, 2],
      rejected: [
        { index: 3, field: "kind", problem: expect.stringContaining("user, bot, system") },
      ],
    });
    expect((await store.read("c")).map((m) => [m.id, m.kind])).toEqual([
      ["j", "system"],
      ["b", "bot"],
      ["u", undefined],
    ]);
    const again = await ingest(store, [
      { id: "j", ts: T, channel: "c", user: null, text: "ana has joined", kind: "system" },
      { id: "u", ts: T + 2, channel: "c", user: "ana", text: "hi" },
      { id: "b", ts: T + 1, channel: "c", user: "ci", text: "build ok" },
    ]);
    expect(again).toMatchObject({
      unchanged: [0, 1],
      conflicts: [{ index: 2, fields: ["kind"] }],
    });
  });

  it("rejects, before any I/O, what DynamoDB or the pipeline could not take, and stores the rest", async () => {
    const store = new MemoryStore();
    const result = await ingest(store, [
      { id: "ok-1", ts: T, channel: "c", text: "fine" },
      { id: "big", ts: T, channel: "c", text: "x".repeat(400 * 1024) },
      { id: "i".repeat(1023), ts: T, channel: "c" },
      { id: "x\ud800", ts: T, channel: "c" },
      { id: "x\ud801", ts: T, channel: "c" },
      { id: "k", ts: T, channel: "c".repeat(2049) },
      { id: "t", ts: -1, channel: "c" },
      { id: "u", ts: T, channel: "c", text: "broken \udc00 half" },
      { id: "ok-2", ts: T + 1, channel: "c", text: "also fine" },
    ]);
    expect(result.stored).toEqual([0, 8]);
    expect(result.rejected.map((r) => [r.index, r.field])).toEqual([
      [1, "text"],
      [2, "id"],
      [3, "id"],
      [4, "id"],
      [5, "channel"],
      [6, "ts"],
      [7, "text"],
    ]);
    expect(result.rejected[0].problem).toMatch(/takes \d+ bytes as an item with its index entry/);
    expect(result.rejected[2].problem).toContain("invalid UTF-16");
    expect(await store.read("c")).toHaveLength(2);
  });

  it("holds channels to the 1,024 bytes DynamoDB's conversations index takes, and names an oversized user", async () => {
    const store = new MemoryStore();
    const result = await ingest(store, [
      { id: "a", ts: T, channel: "c".repeat(1024) },
      { id: "b", ts: T, channel: "c".repeat(1025) },
      { id: "c", ts: T, channel: "c", user: "u".repeat(450 * 1024), text: "hi" },
      { id: "d", ts: T, channel: "c", user: "ana", text: "x".repeat(450 * 1024) },
    ]);
    expect(result.stored).toEqual([0]);
    expect(result.rejected).toEqual([
      {
        index: 1,
        field: "channel",
        problem: expect.stringContaining("over the 1024-byte limit of a DynamoDB sort key"),
      },
      { index: 2, field: "user", problem: expect.stringMatching(/takes \d+ bytes as an item/) },
      { index: 3, field: "text", problem: expect.stringMatching(/takes \d+ bytes as an item/) },
    ]);
  });

  it("reports the unconfirmed suffix of a channel as failed, with the store's uncertainty", async () => {
    const memory = new MemoryStore();
    const flaky: IngestStore = {
      ...editing(memory),
      async write(conversation, messages) {
        if (conversation !== "bad") return memory.write(conversation, messages);
        await memory.write(conversation, messages.slice(0, 1));
        throw new WriteError({ accepted: 1, uncertain: true }, new Error("connection reset"));
      },
    };
    const result = await ingest(flaky, [
      { id: "1", ts: T, channel: "bad" },
      { id: "2", ts: T, channel: "good" },
      { id: "3", ts: T + 1, channel: "bad" },
      { id: "4", ts: T + 2, channel: "bad" },
    ]);
    expect(result.stored).toEqual([0, 1]);
    expect(result.failed).toEqual([
      { index: 2, error: expect.stringContaining("connection reset"), uncertain: true },
      { index: 3, error: expect.stringContaining("connection reset"), uncertain: true },
    ]);
  });

  it("treats a writer error without an outcome as uncertain for the whole channel", async () => {
    const broken: IngestStore = {
      ...editing(new MemoryStore()),
      async write() {
        throw new Error("no idea what happened");
      },
    };
    const result = await ingest(broken, [{ id: "1", ts: T, channel: "x" }]);
    expect(result.failed).toEqual([{ index: 0, error: "no idea what happened", uncertain: true }]);
  });

  it("reports messages whose position lease was not released as failed and uncertain", async () => {
    const positions = new SequenceAllocator();
    const store = new MemoryStore({
      positions: {
        async reserve(channel, count) {
          const lease = await positions.reserve(channel, count);
          if (channel !== "unmarkable") return lease;
          return {
            ...lease,
            release: async () => {
              throw new Error("throttled");
            },
          };
        },
      },
    });
    const result = await ingest(store, [
      { id: "1", ts: T, channel: "ok" },
      { id: "2", ts: T, channel: "unmarkable" },
    ]);
    expect(result.stored).toEqual([0]);
    expect(result.failed).toEqual([
      {
        index: 1,
        error: expect.stringContaining("stored, but not scheduled for segmentation"),
        uncertain: true,
      },
    ]);
    expect(await store.read("unmarkable")).toHaveLength(1);
  });
});
