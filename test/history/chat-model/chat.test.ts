import {
  type ChatRequest,
  cloneRequest,
  StreamAccumulator,
  validateRequest,
} from "convoseg/chat-model";
import { InvalidMessageError, type Message, textMessage } from "convoseg/history";
import { describe, expect, it } from "vitest";

function fieldAtFault(request: unknown): string | undefined {
  try {
    validateRequest(request);
    return undefined;
  } catch (error) {
    if (error instanceof InvalidMessageError) return error.field;
    throw error;
  }
}

const user = textMessage("user", "hi");
const weatherTool = { name: "weather", parameters: { type: "object" } };

describe("validateRequest", () => {
  it("accepts a system prefix, tools and every kind of tool choice", () => {
    for (const toolChoice of ["auto", "none", "required", "weather", undefined]) {
      const request: ChatRequest = {
        messages: [textMessage("system", "a"), textMessage("system", "b"), user],
        tools: [weatherTool, { name: "clock" }],
        toolChoice,
        options: { temperature: 0 },
      };
      expect(fieldAtFault(request)).toBeUndefined();
    }
  });

  it.each<[string, unknown, string]>([
    ["a missing request", null, "request"],
    ["no messages", { messages: [] }, "messages"],
    ["messages that are not an array", { messages: "hi" }, "messages"],
    ["an invalid message", { messages: [user, { role: "user", parts: [] }] }, "messages[1].parts"],
    [
      "a system message after a user message",
      { messages: [user, textMessage("system", "late")] },
      "messages[1].role",
    ],
    ["an empty tool name", { messages: [user], tools: [{ name: "" }] }, "tools[0].name"],
    [
      "a duplicate tool name",
      { messages: [user], tools: [weatherTool, weatherTool] },
      "tools[1].name",
    ],
    ["tools that are not an array", { messages: [user], tools: {} }, "tools"],
    [
      "a tool choice naming no defined tool",
      { messages: [user], tools: [weatherTool], toolChoice: "clock" },
      "toolChoice",
    ],
    ["options that are not an object", { messages: [user], options: [1] }, "options"],
  ])("rejects %s", (_case, request, field) => {
    expect(fieldAtFault(request)).toBe(field);
  });

  it("names the rule a late system message breaks", () => {
    expect(() => validateRequest({ messages: [user, textMessage("system", "late")] })).toThrow(
      "system messages only as a leading prefix",
    );
  });
});

describe("cloneRequest", () => {
  it("returns a copy that shares nothing with the original", () => {
    const media: Message = {
      role: "user",
      parts: [{ type: "media", mimeType: "image/png", data: new Uint8Array([1, 2]) }],
      metadata: { tags: ["a"] },
    };
    const request: ChatRequest = { messages: [media], tools: [weatherTool], options: { n: 1 } };
    const copy = cloneRequest(request);
    expect(copy).toEqual(request);

    const part = request.messages[0].parts[0];
    if (part.type === "media") part.data[0] = 9;
    request.messages[0].metadata = {};
    request.tools?.push({ name: "late" });
    expect(copy.messages[0].parts[0]).toMatchObject({ data: new Uint8Array([1, 2]) });
    expect(copy.messages[0].metadata).toEqual({ tags: ["a"] });
    expect(copy.tools).toEqual([weatherTool]);
  });
});

describe("StreamAccumulator", () => {
  it("joins consecutive text parts and keeps the other parts in order", () => {
    const accumulator = new StreamAccumulator();
    accumulator.add({ parts: [{ type: "reasoning", text: "think" }] });
    accumulator.add({ parts: [{ type: "text", text: "hel" }] });
    accumulator.add({ parts: [{ type: "text", text: "lo", metadata: { lang: "en" } }] });
    accumulator.add({
      parts: [{ type: "tool-call", id: "c1", name: "weather", arguments: "{}" }],
    });
    accumulator.add({ parts: [{ type: "text", text: "!" }] });
    accumulator.add({ finishReason: "tool_calls", usage: { inputTokens: 3, outputTokens: 5 } });

    expect(accumulator.response()).toEqual({
      message: {
        role: "assistant",
        parts: [
          { type: "reasoning", text: "think" },
          { type: "text", text: "hello", metadata: { lang: "en" } },
          { type: "tool-call", id: "c1", name: "weather", arguments: "{}" },
          { type: "text", text: "!" },
        ],
      },
      finishReason: "tool_calls",
      usage: { inputTokens: 3, outputTokens: 5 },
    });
  });

  it("rejects an empty delta", () => {
    const accumulator = new StreamAccumulator();
    expect(() => accumulator.add({})).toThrow(InvalidMessageError);
    expect(() => accumulator.add({ parts: [] })).toThrow(
      expect.objectContaining({ field: "delta" }),
    );
  });

  it("rejects a part an assistant cannot send", () => {
    const accumulator = new StreamAccumulator();
    const toolResult = { type: "tool-result" as const, callId: "c", name: "n", result: "r" };
    expect(() => accumulator.add({ parts: [toolResult] })).toThrow(
      expect.objectContaining({ field: "delta.parts[0]" }),
    );
  });

  it("has no response before any part was streamed", () => {
    const accumulator = new StreamAccumulator();
    expect(() => accumulator.response()).toThrow(InvalidMessageError);
    accumulator.add({ finishReason: "stop" });
    expect(() => accumulator.response()).toThrow(InvalidMessageError);
  });

  it("owns its parts and hands out detached responses", () => {
    const accumulator = new StreamAccumulator();
    const delta = { parts: [{ type: "text" as const, text: "a" }] };
    accumulator.add(delta);
    delta.parts[0].text = "changed by the provider";
    const first = accumulator.response();
    first.message.parts.push({ type: "text", text: "changed by the caller" });
    expect(accumulator.response().message).toEqual(textMessage("assistant", "a"));
  });
});
