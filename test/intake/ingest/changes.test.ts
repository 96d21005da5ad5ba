/**
 * Ingestion's edits and deletions: their answers per index, input order within a channel, the
 * hold of a change that comes before its message, and the change listener: told of applied
 * changes only, and a failure of it fails them as uncertain, so that re-sending calls it again.
 */

import { MemoryStore, messageText } from "convoseg/history";
import { type AppliedChange, ingest } from "convoseg/ingest";
import { describe, expect, it } from "vitest";

const T = Date.UTC(2025, 2, 3, 8);
const add = (id: string, text: string, channel = "c") => ({
  id,
  ts: T,
  channel,
  user: "ana",
  text,
});
const edit = (id: string, text: string, editedAt: number, channel = "c") => ({
  op: "edit",
  id,
  channel,
  text,
  editedAt,
});
const del = (id: string, channel = "c") => ({ op: "delete", id, channel });

/** A listener that records its calls, and fails while `failing` is set. */
function listener() {
  const calls: [string, AppliedChange[]][] = [];
  const state = { failing: false };
  return {
    calls,
    state,
    onChanged: async (channel: string, changes: AppliedChange[]) => {
      if (state.failing) throw new Error("knowledge store unavailable");
      calls.push([channel, changes]);
    },
  };
}

describe("ingest: edits and deletions", () => {
  it("answers each change by index: applied, unchanged, stale, missing", async () => {
    const store = new MemoryStore();
    await ingest(store, [add("1", "typo"), add("2", "bye")]);
    const result = await ingest(store, [
      edit("1", "fixed", T + 10),
      edit("1", "fixed", T + 10),
      edit("1", "older", T + 5),
      del("2"),
      del("2"),
      edit("9", "nothing there", T),
      del("8"),
      { op: "edit", id: "1", text: "x" },
    ]);
    expect(result.changes).toEqual([
      { index: 0, op: "edit", status: "applied" },
      { index: 1, op: "edit", status: "unchanged" },
      { index: 2, op: "edit", status: "stale" },
      { index: 3, op: "delete", status: "applied" },
      { index: 4, op: "delete", status: "unchanged" },
      { index: 5, op: "edit", status: "missing" },
      { index: 6, op: "delete", status: "missing" },
    ]);
    expect(result.rejected).toEqual([
      { index: 7, field: "editedAt", problem: expect.stringContaining("ISO-8601") },
    ]);
    expect((await store.read("c")).map(messageText)).toEqual(["fixed"]);
  });

  it("applies a channel's inputs in order: an add then its deletion in one batch stores nothing of it", async () => {
    const store = new MemoryStore();
    const result = await ingest(store, [
      add("1", "oops"),
      del("1"),
      add("2", "kept"),
      edit("2", "kept!", T + 1),
    ]);
    expect(result.stored).toEqual([0, 2]);
    expect(result.changes.map((c) => c.status)).toEqual(["applied", "applied"]);
    expect((await store.read("c")).map(messageText)).toEqual(["kept!"]);
  });

  it("refuses a message whose deletion came first (held), reporting it deleted", async () => {
    const store = new MemoryStore();
    expect((await ingest(store, [del("1")])).changes).toEqual([
      { index: 0, op: "delete", status: "missing" },
    ]);
    const result = await ingest(store, [add("1", "late"), add("2", "fine")]);
    expect(result).toMatchObject({ stored: [1], deleted: [0], unchanged: [], conflicts: [] });
    expect((await store.read("c")).map((m) => m.id)).toEqual(["2"]);
  });

  it("stores a message whose deletion came first once the hold is over", async () => {
    let now = T;
    const store = new MemoryStore({ now: () => now, changeHoldHours: 1 });
    await ingest(store, [del("1")]);
    now += 61 * 60_000;
    const result = await ingest(store, [add("1", "real")]);
    expect(result).toMatchObject({ stored: [0], deleted: [] });
    expect((await store.read("c")).map(messageText)).toEqual(["real"]);
  });

  it("stores a message whose edit came first with the edit; its re-sent original is unchanged", async () => {
    const store = new MemoryStore();
    expect((await ingest(store, [edit("1", "fixed", T + 10)])).changes).toEqual([
      { index: 0, op: "edit", status: "missing" },
    ]);
    expect(await ingest(store, [add("1", "typo")])).toMatchObject({ stored: [0], conflicts: [] });
    expect((await store.read("c")).map((m) => [messageText(m), m.editedAt])).toEqual([
      ["fixed", T + 10],
    ]);
    expect(await ingest(store, [add("1", "typo")])).toMatchObject({
      unchanged: [0],
      conflicts: [],
    });
  });

  it("takes a re-sent original of an edited message as unchanged, not a conflict", async () => {
    const store = new MemoryStore();
    await ingest(store, [add("1", "first"), edit("1", "second", T + 1)]);
    const again = await ingest(store, [add("1", "first")]);
    expect(again).toMatchObject({ unchanged: [0], conflicts: [] });
  });

  it("tells the listener of applied changes only, per channel, with the message's ts", async () => {
    const store = new MemoryStore();
    const { calls, onChanged } = listener();
    await ingest(store, [add("1", "a"), add("2", "b"), add("3", "c", "other")]);
    await ingest(store, [edit("1", "a2", T + 1), del("2"), del("3", "other")], { onChanged });
    await ingest(store, [edit("1", "a2", T + 1), edit("1", "a0", T), del("2"), del("7")], {
      onChanged,
    });
    expect(calls.sort()).toEqual([
      [
        "c",
        [
          { id: "1", ts: T, kind: "edit" },
          { id: "2", ts: T, kind: "delete" },
        ],
      ],
      ["other", [{ id: "3", ts: T, kind: "delete" }]],
    ]);
  });

  it("fails applied changes as uncertain when the listener fails, and a re-send tells it again", async () => {
    const store = new MemoryStore();
    const { calls, state, onChanged } = listener();
    await ingest(store, [add("1", "a"), add("2", "b")]);
    state.failing = true;
    const batch = [del("1"), edit("2", "b2", T + 1)];
    const failed = await ingest(store, batch, { onChanged });
    expect(failed.changes).toEqual([]);
    expect(failed.failed).toEqual([
      { index: 0, error: expect.stringContaining("change listener failed"), uncertain: true },
      { index: 1, error: expect.stringContaining("change listener failed"), uncertain: true },
    ]);
    // The store applied them; the listener still owes its work.
    expect((await store.read("c")).map(messageText)).toEqual(["b2"]);
    state.failing = false;
    const resent = await ingest(store, batch, { onChanged });
    expect(resent.changes.map((c) => c.status)).toEqual(["applied", "applied"]);
    expect(calls).toEqual([
      [
        "c",
        [
          { id: "1", ts: T, kind: "delete" },
          { id: "2", ts: T, kind: "edit" },
        ],
      ],
    ]);
    // Once told, a replay is a replay.
    expect((await ingest(store, batch, { onChanged })).changes.map((c) => c.status)).toEqual([
      "unchanged",
      "unchanged",
    ]);
    expect(calls).toHaveLength(1);
  });

  it("fails a channel's later inputs unattempted once a change fails, keeping their order", async () => {
    const memory = new MemoryStore();
    await ingest(memory, [add("1", "a")]);
    const store = {
      write: memory.write.bind(memory),
      settle: memory.settle.bind(memory),
      change: async () => {
        throw new Error("throttled");
      },
    };
    const result = await ingest(store, [del("1"), add("2", "b"), add("3", "c", "other")]);
    expect(result.stored).toEqual([2]);
    expect(result.failed).toEqual([
      { index: 0, error: "throttled", uncertain: true },
      { index: 1, error: expect.stringContaining("not attempted"), uncertain: false },
    ]);
  });
});
