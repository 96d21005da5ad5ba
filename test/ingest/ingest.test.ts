import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../lib/history/memory-store.js";
import { textMessage } from "../../lib/history/message.js";
import { WriteError } from "../../lib/history/outcome.js";
import type { Writer } from "../../lib/history/store.js";
import { ingest } from "../../lib/ingest/index.js";

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
    });
    expect(await store.read("help")).toEqual([
      textMessage("user", "hi", { id: "1", ts: T, author: "ana" }),
    ]);
    expect(await store.read("dev")).toEqual([textMessage("user", "", { id: "3", ts: T + 1000 })]);
  });

  it("is idempotent: ingesting the same messages again changes nothing", async () => {
    const store = new MemoryStore();
    const batch = [
      { id: "a", ts: T, channel: "c", text: "one" },
      { id: "b", ts: T + 1, channel: "c", text: "two" },
    ];
    await ingest(store, batch);
    const again = await ingest(store, batch);
    expect(again.stored).toEqual([0, 1]);
    expect(await store.read("c")).toHaveLength(2);
  });

  it("reports the unconfirmed suffix of a channel as failed, with the store's uncertainty", async () => {
    const memory = new MemoryStore();
    const flaky: Writer = {
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
    const broken: Writer = {
      async write() {
        throw new Error("no idea what happened");
      },
    };
    const result = await ingest(broken, [{ id: "1", ts: T, channel: "x" }]);
    expect(result.failed).toEqual([{ index: 0, error: "no idea what happened", uncertain: true }]);
  });

  it("marks each channel after storing, and reports a failed mark as uncertain", async () => {
    const store = new MemoryStore();
    const marked: string[] = [];
    const result = await ingest(
      store,
      [
        { id: "1", ts: T, channel: "ok" },
        { id: "2", ts: T, channel: "unmarkable" },
      ],
      {
        markArrivals: async (channel) => {
          if (channel === "unmarkable") throw new Error("throttled");
          marked.push(channel);
        },
      },
    );
    expect(marked).toEqual(["ok"]);
    expect(result.stored).toEqual([0]);
    expect(result.failed).toEqual([
      { index: 1, error: "stored, but not scheduled for segmentation: throttled", uncertain: true },
    ]);
    expect(await store.read("unmarkable")).toHaveLength(1);
  });
});
