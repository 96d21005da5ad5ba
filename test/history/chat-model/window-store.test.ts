import { InvalidWindowError, WindowStore, WindowTooSmallError } from "convoseg/chat-model";
import {
  MemoryStore,
  type Message,
  messageText,
  NilStoreError,
  type Store,
  textMessage,
} from "convoseg/history";
import { describe, expect, it } from "vitest";

const CONVERSATION = "conversation";

async function windowOver(messages: Message[], limit: number): Promise<WindowStore> {
  const store = new MemoryStore();
  await store.write(CONVERSATION, messages);
  return new WindowStore(store, limit);
}

const toolCallTurn: Message[] = [
  textMessage("user", "weather in Paris and Rome?"),
  {
    role: "assistant",
    parts: [
      { type: "reasoning", text: "two cities" },
      { type: "tool-call", id: "c1", name: "weather", arguments: '{"city":"Paris"}' },
      { type: "tool-call", id: "c2", name: "weather", arguments: '{"city":"Rome"}' },
    ],
  },
  {
    role: "tool",
    parts: [
      { type: "tool-result", callId: "c1", name: "weather", result: "sunny" },
      { type: "tool-result", callId: "c2", name: "weather", result: "rain" },
    ],
  },
  textMessage("assistant", "Paris is sunny, Rome is rainy."),
];

describe("WindowStore construction", () => {
  it("rejects a missing store", () => {
    expect(() => new WindowStore(null, 3)).toThrow(NilStoreError);
    expect(() => new WindowStore(undefined, 3)).toThrow(NilStoreError);
  });

  it.each([0, -1, 1.5, Number.NaN])("rejects limit %s", (limit) => {
    expect(() => new WindowStore(new MemoryStore(), limit)).toThrow(InvalidWindowError);
    expect(() => new WindowStore(new MemoryStore(), limit)).toThrow(
      "history: invalid message window: limit must be greater than zero",
    );
  });

  it("accepts a limit of one", () => {
    expect(new WindowStore(new MemoryStore(), 1).limit).toBe(1);
  });
});

describe("WindowStore.read", () => {
  it("merges system messages first and keeps the recent messages", async () => {
    const window = await windowOver(
      [
        textMessage("system", "first", { metadata: { shared: "first", only: "first" } }),
        textMessage("user", "one"),
        textMessage("system", "second", { metadata: { shared: "second" } }),
        textMessage("user", "two"),
        textMessage("user", "three"),
        textMessage("user", "four"),
      ],
      3,
    );
    const messages = await window.read(CONVERSATION);
    expect(messages.map((m) => [m.role, messageText(m)])).toEqual([
      ["system", "first\n\nsecond"],
      ["user", "three"],
      ["user", "four"],
    ]);
    expect(messages[0].metadata).toEqual({ shared: "second", only: "first" });
  });

  it("omits empty merged metadata", async () => {
    const window = await windowOver(
      [textMessage("system", "a"), textMessage("system", "b"), textMessage("user", "hi")],
      5,
    );
    const [system] = await window.read(CONVERSATION);
    expect(system).toEqual({
      role: "system",
      parts: [
        { type: "text", text: "a" },
        { type: "text", text: "\n\n" },
        { type: "text", text: "b" },
      ],
    });
  });

  it("keeps a complete tool turn together", async () => {
    const stored = [textMessage("user", "hi"), textMessage("assistant", "hello"), ...toolCallTurn];
    const window = await windowOver(stored, 4);
    expect(await window.read(CONVERSATION)).toEqual(toolCallTurn);
  });

  it("rejects a newest turn that does not fit rather than splitting it", async () => {
    const window = await windowOver(
      [textMessage("system", "be brief"), ...toolCallTurn.slice(0, 3)],
      3,
    );
    const error = await window.read(CONVERSATION).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WindowTooSmallError);
    expect(error).toMatchObject({
      code: "HISTORY_WINDOW_TOO_SMALL",
      newestTurnSize: 3,
      available: 2,
      message:
        "history: message window too small: newest turn has 3 messages, available limit is 2",
    });
  });

  it("keeps a standalone newest user turn", async () => {
    const window = await windowOver(
      [
        textMessage("user", "old question"),
        textMessage("assistant", "old answer"),
        textMessage("user", "new question"),
      ],
      1,
    );
    expect(await window.read(CONVERSATION)).toEqual([textMessage("user", "new question")]);
  });

  it("stops at the first older turn that does not fit, keeping a contiguous suffix", async () => {
    const window = await windowOver(
      [
        textMessage("user", "small old turn"),
        textMessage("user", "big turn"),
        textMessage("assistant", "a"),
        textMessage("assistant", "b"),
        textMessage("user", "newest"),
      ],
      3,
    );
    expect((await window.read(CONVERSATION)).map(messageText)).toEqual(["newest"]);
  });

  it("groups leading non-user messages into their own first turn", async () => {
    const store = new MemoryStore();
    await store.write(CONVERSATION, [
      textMessage("assistant", "welcome"),
      textMessage("assistant", "how can I help?"),
      textMessage("user", "hi"),
    ]);
    const narrow = new WindowStore(store, 2);
    expect((await narrow.read(CONVERSATION)).map(messageText)).toEqual(["hi"]);
    const wide = new WindowStore(store, 3);
    expect((await wide.read(CONVERSATION)).map(messageText)).toEqual([
      "welcome",
      "how can I help?",
      "hi",
    ]);
  });

  it("has no room for a turn when limit 1 is taken by the system message", async () => {
    const window = await windowOver([textMessage("system", "s"), textMessage("user", "u")], 1);
    await expect(window.read(CONVERSATION)).rejects.toThrow(WindowTooSmallError);
  });

  it("returns the merged system message alone when there is no turn", async () => {
    const window = await windowOver([textMessage("system", "s")], 1);
    expect(await window.read(CONVERSATION)).toEqual([textMessage("system", "s")]);
  });

  it("returns an empty array for an unknown conversation", async () => {
    const window = new WindowStore(new MemoryStore(), 2);
    expect(await window.read("unknown")).toEqual([]);
  });

  it("preserves system part structure and detaches the result", async () => {
    const window = await windowOver(
      [
        {
          role: "system",
          parts: [
            { type: "text", text: "rules", metadata: { cache: "ephemeral" } },
            { type: "text", text: "more rules" },
          ],
        },
        textMessage("system", "second"),
      ],
      1,
    );
    const [merged] = await window.read(CONVERSATION);
    expect(merged.parts).toHaveLength(4);
    expect(merged.parts[0]).toEqual({
      type: "text",
      text: "rules",
      metadata: { cache: "ephemeral" },
    });
    expect(messageText(merged)).toBe("rulesmore rules\n\nsecond");

    merged.parts.length = 0;
    const [again] = await window.read(CONVERSATION);
    expect(again.parts).toHaveLength(4);
  });

  it("passes an error of the underlying read through unchanged", async () => {
    const failure = new Error("backend down");
    const failing: Store = {
      read: () => Promise.reject(failure),
      write: () => Promise.reject(new Error("unused")),
      clear: () => Promise.reject(new Error("unused")),
    };
    await expect(new WindowStore(failing, 2).read(CONVERSATION)).rejects.toBe(failure);
  });
});

describe("WindowStore writes and clears", () => {
  it("delegates both to the underlying store", async () => {
    const store = new MemoryStore();
    const window = new WindowStore(store, 1);
    expect(await window.write("b", [textMessage("user", "kept")])).toEqual({
      accepted: 1,
      uncertain: false,
    });
    await window.write("a", [textMessage("user", "one"), textMessage("user", "two")]);
    expect(await store.read("a")).toHaveLength(2);

    await window.clear("a");
    expect(await window.read("a")).toEqual([]);
    expect(await store.read("b")).toEqual([textMessage("user", "kept")]);
  });
});
