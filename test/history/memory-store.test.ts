import { MemoryStore, messageText, textMessage } from "convoseg/history";
import { describe, expect, it } from "vitest";
import { describeAuthorConformance } from "./author-conformance.js";
import { describeChangeConformance } from "./change-conformance.js";
import { describeStoreConformance } from "./conformance.js";
import { describeLinkerReads } from "./linker-reads-conformance.js";

const shared = new MemoryStore();
describeStoreConformance("MemoryStore", () => ({ store: shared }), {
  reader: true,
  writer: true,
  clearer: true,
  lister: true,
});

describe("MemoryStore", () => {
  it("works as constructed: write hello, read it back", async () => {
    const store = new MemoryStore();
    await store.write("demo", [textMessage("user", "hello")]);
    const messages = await store.read("demo");
    expect(`${messages.length} ${messageText(messages[0])}`).toBe("1 hello");
  });
});

describeChangeConformance("MemoryStore", async (hold) => new MemoryStore(hold));
describeAuthorConformance("MemoryStore", async () => new MemoryStore());

describeLinkerReads("MemoryStore", () => new MemoryStore());
