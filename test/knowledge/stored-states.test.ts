import { MemoryStore, textMessage } from "convoseg/history";
import { storedMessageStates } from "convoseg/knowledge/write";
import { describe, expect, it } from "vitest";

describe("storedMessageStates", () => {
  it("reads each message as stored now: deleted ones without content, edited ones with their text", async () => {
    const store = new MemoryStore();
    await store.write("desk", [
      textMessage("user", "hello", { id: "a", ts: 1000, author: "ana" }),
      textMessage("user", "my phone is 555", { id: "b", ts: 2000, author: "ben" }),
      textMessage("user", "ana joined", { id: "c", ts: 3000, kind: "system" }),
    ]);
    await store.change("desk", { kind: "edit", id: "a", text: "hello all", editedAt: 1500 });
    await store.change("desk", { kind: "delete", id: "b" });
    const states = await storedMessageStates(store).states("desk", ["a", "b", "c", "zz"]);
    expect(Object.fromEntries(states)).toEqual({
      a: { deleted: false, ts: 1000, editedAt: 1500, text: "hello all", author: "ana" },
      b: { deleted: true, ts: 2000 },
      c: { deleted: false, ts: 3000, text: "ana joined", kind: "system" },
    });
  });
});
