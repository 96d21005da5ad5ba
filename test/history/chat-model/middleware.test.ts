import {
  type ChatRequest,
  type ChatResponse,
  CommitError,
  Middleware,
  MiddlewareError,
  NilStreamError,
} from "convoseg/chat-model";
import {
  findCause,
  InvalidConversationIdError,
  InvalidMessageError,
  MemoryStore,
  type Message,
  messageText,
  NilStoreError,
  textMessage,
  WriteError,
} from "convoseg/history";
import { describe, expect, it } from "vitest";
import {
  answer,
  chunk,
  drain,
  FakeModel,
  FakeStreamer,
  nilStreamer,
  RecordingStore,
  streamError,
  userRequest,
} from "./fakes.js";

const CONVERSATION = "conversation";
const bound = { conversationId: CONVERSATION };

class DiskFull extends Error {}

function setup(reply: ChatResponse = answer("answer")) {
  const store = new RecordingStore();
  const model = new FakeModel(async () => reply);
  const middleware = new Middleware(store);
  return { store, model, chat: middleware.call(model), middleware };
}

function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error,
  );
}

const toolCall: Message = {
  role: "assistant",
  parts: [{ type: "tool-call", id: "c1", name: "weather", arguments: '{"city":"Paris"}' }],
};
const toolResult: Message = {
  role: "tool",
  parts: [{ type: "tool-result", callId: "c1", name: "weather", result: "sunny" }],
};

describe("Middleware construction", () => {
  it("rejects a missing store", () => {
    expect(() => new Middleware(null)).toThrow(NilStoreError);
    expect(() => new Middleware(undefined)).toThrow(NilStoreError);
  });
});

describe("Middleware.call", () => {
  it("replays in stable order and persists only the fresh exchange", async () => {
    const { store, model, chat } = setup();
    await store.memory.write(CONVERSATION, [
      textMessage("system", "stale stored system"),
      textMessage("user", "stored user"),
    ]);
    const request = {
      messages: [textMessage("system", "live system"), textMessage("user", "fresh user")],
    };

    await chat.call(request, bound);

    expect(model.requests).toHaveLength(1);
    expect(model.requests[0].messages).toEqual([
      textMessage("system", "live system"),
      textMessage("user", "stored user"),
      textMessage("user", "fresh user"),
    ]);
    expect(store.writes).toEqual([
      [textMessage("user", "fresh user"), textMessage("assistant", "answer")],
    ]);
  });

  it.each([{}, { conversationId: "" }, undefined])(
    "is transparent without a conversation (%o)",
    async (options) => {
      const { store, model, chat } = setup();
      const request = userRequest("hi");
      const response = await chat.call(request, options);
      expect(model.requests[0]).toBe(request);
      expect(messageText(response.message)).toBe("answer");
      expect(store.calls).toBe(0);
    },
  );

  it("rejects an invalid conversation before the store or the model", async () => {
    const { store, model, chat } = setup();
    const error = await rejection(chat.call(userRequest("hi"), { conversationId: " padded" }));
    expect(error).toBeInstanceOf(InvalidConversationIdError);
    expect(model.requests).toHaveLength(0);
    expect(store.calls).toBe(0);
  });

  it("rejects an invalid request before the store or the model", async () => {
    const { store, model, chat } = setup();
    const error = await rejection(chat.call({ messages: [] }, bound));
    expect(error).toBeInstanceOf(MiddlewareError);
    expect(error).toMatchObject({ code: "HISTORY_MIDDLEWARE_PREPARE_REQUEST" });
    expect((error as Error).message).toMatch(/^history: middleware: prepare request: /);
    expect(findCause(error, InvalidMessageError)?.field).toBe("messages");
    expect(model.requests).toHaveLength(0);
    expect(store.calls).toBe(0);
  });

  it("propagates a read error without calling the model", async () => {
    const { store, model, chat } = setup();
    const failure = new DiskFull("read failed");
    store.readError = failure;
    const error = await rejection(chat.call(userRequest("hi"), bound));
    expect(error).toBeInstanceOf(MiddlewareError);
    expect((error as Error).message).toBe("history: middleware: read history: read failed");
    expect(findCause(error, DiskFull)).toBe(failure);
    expect(model.requests).toHaveLength(0);
    expect(store.writes).toHaveLength(0);
  });

  it("propagates a model error unchanged and writes nothing", async () => {
    const store = new RecordingStore();
    const failure = new Error("model overloaded");
    const chat = new Middleware(store).call(new FakeModel(() => Promise.reject(failure)));
    await expect(chat.call(userRequest("hi"), bound)).rejects.toBe(failure);
    expect(store.writes).toHaveLength(0);
  });

  it("reports a write error as a CommitError that keeps the response", async () => {
    const reply = answer("answer");
    const { store, chat } = setup(reply);
    const failure = new DiskFull("write failed");
    store.writeError = failure;
    const error = await rejection(chat.call(userRequest("hi"), bound));
    expect(error).toBeInstanceOf(CommitError);
    expect((error as CommitError).response).toBe(reply);
    expect(findCause(error, WriteError)?.cause).toBe(failure);
    expect(store.writes).toHaveLength(1);
  });

  it("defers a tool call until the tool exchange is complete", async () => {
    const store = new RecordingStore();
    const replies = [{ message: toolCall, finishReason: "tool_calls" }, answer("sunny")];
    const model = new FakeModel(async () => replies[model.requests.length - 1]);
    const chat = new Middleware(store).call(model);
    const question = textMessage("user", "weather in Paris?");

    const first = await chat.call({ messages: [question] }, bound);
    expect(first.message).toEqual(toolCall);
    expect(store.writes).toHaveLength(0);

    await chat.call({ messages: [question, toolCall, toolResult] }, bound);
    expect(store.writes).toEqual([
      [question, toolCall, toolResult, textMessage("assistant", "sunny")],
    ]);
  });

  it("does not persist a response that is not from the assistant", async () => {
    const { store, chat } = setup({ message: textMessage("user", "echo") });
    await chat.call(userRequest("hi"), bound);
    expect(store.writes).toHaveLength(0);
  });

  it("persists snapshots, so later changes by the caller do not leak into the store", async () => {
    const store = new MemoryStore();
    const reply = answer("answer");
    const chat = new Middleware(store).call(new FakeModel(async () => reply));
    const request: ChatRequest = {
      messages: [
        {
          role: "user",
          parts: [
            { type: "text", text: "look" },
            { type: "media", mimeType: "image/png", data: new Uint8Array([1, 2, 3]) },
          ],
          metadata: { source: "camera" },
        },
      ],
    };
    const expected = structuredClone([request.messages[0], reply.message]);

    await chat.call(request, bound);
    request.messages[0].metadata = { source: "changed" };
    const media = request.messages[0].parts[1];
    if (media.type === "media") media.data[0] = 99;
    const text = reply.message.parts[0];
    if (text.type === "text") text.text = "changed";

    expect(await store.read(CONVERSATION)).toEqual(expected);
  });

  it("persists the fresh messages as sent, even if the model changes its request", async () => {
    const store = new RecordingStore();
    const model = new FakeModel(async () => {
      model.requests[0].messages[0].parts.push({ type: "text", text: " rewritten" });
      return answer("answer");
    });
    await new Middleware(store).call(model).call(userRequest("hi"), bound);
    expect(store.writes).toEqual([[textMessage("user", "hi"), textMessage("assistant", "answer")]]);
  });

  it("does not hand the model the caller's request objects", async () => {
    const { model, chat } = setup();
    const request = userRequest("hi");
    await chat.call(request, bound);
    expect(model.requests[0]).not.toBe(request);
    expect(model.requests[0].messages[0]).not.toBe(request.messages[0]);
  });

  it.each<[string, Message]>([
    ["a system message without parts", { role: "system", parts: [] }],
    ["a user message without parts", { role: "user", parts: [] }],
  ])("rejects %s in the stored history before the model", async (_case, corrupt) => {
    const { store, model, chat } = setup();
    store.stored = [textMessage("user", "fine"), corrupt];
    const error = await rejection(chat.call(userRequest("hi"), bound));
    expect(error).toMatchObject({ code: "HISTORY_MIDDLEWARE_STORED_MESSAGE", index: 1 });
    expect((error as Error).message).toMatch(/^history: middleware: stored message 1: /);
    expect(findCause(error, InvalidMessageError)?.field).toBe("parts");
    expect(model.requests).toHaveLength(0);
    expect(store.writes).toHaveLength(0);
  });

  it("surfaces a cancellation from the store without calling the model", async () => {
    const model = new FakeModel(async () => answer("answer"));
    const chat = new Middleware(new MemoryStore()).call(model);
    const controller = new AbortController();
    controller.abort();
    const error = await rejection(
      chat.call(userRequest("hi"), { ...bound, signal: controller.signal }),
    );
    expect(findCause(error, DOMException)?.name).toBe("AbortError");
    expect(model.requests).toHaveLength(0);
  });
});

describe("Middleware.stream", () => {
  function streamSetup(streamer: FakeStreamer) {
    const store = new RecordingStore();
    return { store, chat: new Middleware(store).stream(streamer) };
  }

  it("is lazy and persists only a natural completion", async () => {
    const streamer = new FakeStreamer([chunk("hel"), chunk("lo"), { finishReason: "stop" }]);
    const { store, chat } = streamSetup(streamer);

    const stream = chat.stream(userRequest("hello"), bound);
    await Promise.resolve();
    expect(store.reads).toBe(0);
    expect(streamer.requests).toHaveLength(0);

    const { deltas, errors } = await drain(stream);
    expect(errors).toEqual([]);
    expect(deltas).toEqual([chunk("hel"), chunk("lo"), { finishReason: "stop" }]);
    expect(streamer.closed).toBe(1);
    expect(store.writes).toEqual([
      [textMessage("user", "hello"), textMessage("assistant", "hello")],
    ]);
  });

  it("replays the stored history into the streamed request", async () => {
    const streamer = new FakeStreamer([chunk("again")]);
    const { store, chat } = streamSetup(streamer);
    await store.memory.write(CONVERSATION, [textMessage("user", "before")]);
    await drain(chat.stream(userRequest("now"), bound));
    expect(streamer.requests[0].messages.map(messageText)).toEqual(["before", "now"]);
  });

  it("forwards without history when unbound, and refuses a missing stream", async () => {
    const streamer = new FakeStreamer([chunk("hi")]);
    const { store, chat } = streamSetup(streamer);
    const request = userRequest("hello");
    const { deltas } = await drain(chat.stream(request, {}));
    expect(deltas).toEqual([chunk("hi")]);
    expect(streamer.requests[0]).toBe(request);
    expect(store.calls).toBe(0);

    const missing = new Middleware(store).stream(nilStreamer);
    expect(await streamError(missing.stream(request))).toBeInstanceOf(NilStreamError);
  });

  it("does not persist when the consumer stops early, and still closes the provider", async () => {
    const streamer = new FakeStreamer([chunk("a"), chunk("b"), chunk("c")]);
    const { store, chat } = streamSetup(streamer);
    const seen: string[] = [];
    for await (const delta of chat.stream(userRequest("hi"), bound)) {
      seen.push(delta.parts?.[0].type === "text" ? delta.parts[0].text : "");
      break;
    }
    expect(seen).toEqual(["a"]);
    expect(streamer.closed).toBe(1);
    expect(store.writes).toHaveLength(0);
  });

  it("propagates a provider error unchanged and does not persist", async () => {
    const failure = new Error("connection reset");
    const streamer = new FakeStreamer([chunk("partial")], failure);
    const { store, chat } = streamSetup(streamer);
    const { deltas, errors } = await drain(chat.stream(userRequest("hi"), bound));
    expect(deltas).toEqual([chunk("partial")]);
    expect(errors).toEqual([failure]);
    expect(store.writes).toHaveLength(0);
  });

  it("reports a malformed empty delta exactly once and does not persist", async () => {
    const streamer = new FakeStreamer([chunk("ok"), {}, chunk("never")]);
    const { store, chat } = streamSetup(streamer);
    const { deltas, errors } = await drain(chat.stream(userRequest("hi"), bound));
    expect(deltas).toEqual([chunk("ok")]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: "HISTORY_MIDDLEWARE_ACCUMULATE_STREAM" });
    expect(findCause(errors[0], InvalidMessageError)?.field).toBe("delta");
    expect(streamer.closed).toBe(1);
    expect(store.writes).toHaveLength(0);
  });

  it("reports a stream that ends without any part after its deltas", async () => {
    const { store, chat } = streamSetup(new FakeStreamer([{ finishReason: "stop" }]));
    const { deltas, errors } = await drain(chat.stream(userRequest("hi"), bound));
    expect(deltas).toEqual([{ finishReason: "stop" }]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: "HISTORY_MIDDLEWARE_COMPLETE_STREAM" });
    expect(store.writes).toHaveLength(0);
  });

  it("defers a streamed tool call", async () => {
    const streamer = new FakeStreamer([{ parts: toolCall.parts, finishReason: "tool_calls" }]);
    const { store, chat } = streamSetup(streamer);
    const { errors } = await drain(chat.stream(userRequest("weather?"), bound));
    expect(errors).toEqual([]);
    expect(store.writes).toHaveLength(0);
  });

  it("reports a write failure after the terminal delta", async () => {
    const streamer = new FakeStreamer([chunk("answer")]);
    const { store, chat } = streamSetup(streamer);
    const failure = new DiskFull("write failed");
    store.writeError = failure;
    const { deltas, errors } = await drain(chat.stream(userRequest("hi"), bound));
    expect(deltas).toEqual([chunk("answer")]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(CommitError);
    expect(findCause(errors[0], DiskFull)).toBe(failure);
    expect((errors[0] as CommitError).response.message).toEqual(textMessage("assistant", "answer"));
  });

  it("refuses a missing stream on a bound call after reading", async () => {
    const store = new RecordingStore();
    const chat = new Middleware(store).stream(nilStreamer);
    expect(await streamError(chat.stream(userRequest("hi"), bound))).toBeInstanceOf(NilStreamError);
    expect(store.reads).toBe(1);
    expect(store.writes).toHaveLength(0);
  });

  it("rejects an invalid conversation on the first step, before the store or the model", async () => {
    const streamer = new FakeStreamer([chunk("a")]);
    const { store, chat } = streamSetup(streamer);
    const error = await streamError(chat.stream(userRequest("hi"), { conversationId: " padded" }));
    expect(error).toBeInstanceOf(InvalidConversationIdError);
    expect(store.calls).toBe(0);
    expect(streamer.requests).toHaveLength(0);
  });

  it("surfaces a cancellation from the store without starting the model", async () => {
    const streamer = new FakeStreamer([chunk("a")]);
    const chat = new Middleware(new MemoryStore()).stream(streamer);
    const controller = new AbortController();
    controller.abort();
    const error = await streamError(
      chat.stream(userRequest("hi"), { ...bound, signal: controller.signal }),
    );
    expect(findCause(error, DOMException)?.name).toBe("AbortError");
    expect(streamer.requests).toHaveLength(0);
  });
});
