import type { LLMUsage } from "convoseg/extraction";
import { InvalidModelOutputError, LLMError } from "convoseg/extraction";
import { BedrockConverseLLM, type BedrockConverseLLMOptions } from "convoseg/extraction/llm";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  closedAfterEach,
  converseAnswer,
  converseError,
  converseText,
  converseToolUse,
  PORTABLE_SCHEMA as SCHEMA,
  type ScriptedServer,
  startConverseServer,
  testBedrockClient,
  userTurn as user,
} from "../../../support/llm-servers.js";
import {
  type RawServer,
  silent,
  startRawHttp2Server,
  trickle,
} from "../../../support/raw-servers.js";

const MODEL = "anthropic.claude-test-v1:0";

/** The parts of a Converse request body the tests read. */
interface ConverseWire {
  system?: unknown[];
  messages: { role: string; content: unknown[] }[];
  inferenceConfig?: { maxTokens?: number; temperature?: number };
  outputConfig?: {
    textFormat: { type: string; structure: { jsonSchema: { name?: string; schema: string } } };
  };
  toolConfig?: {
    tools: { toolSpec: { name: string; inputSchema: { json: unknown } } }[];
    toolChoice: unknown;
  };
}

const serve = closedAfterEach(startConverseServer);

/** An adapter on `server` whose backoff waits are recorded, not waited. */
function adapter(
  server: ScriptedServer,
  options: Partial<BedrockConverseLLMOptions> = {},
): { llm: BedrockConverseLLM; sleeps: number[] } {
  const sleeps: number[] = [];
  const llm = new BedrockConverseLLM({
    client: testBedrockClient(server.url),
    modelId: MODEL,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...options,
  });
  return { llm, sleeps };
}

const wire = (server: ScriptedServer, index = 0) => server.requests[index].body as ConverseWire;

/** How long the scripted server waits before answering where a test measures latency. */
const ANSWER_DELAY_MS = 40;

describe("BedrockConverseLLM replies", () => {
  it("resolves to the parsed JSON of the reply text", async () => {
    const server = await serve([converseText('{"topics":["tea"],"note":null}')]);
    const { llm } = adapter(server);

    await expect(llm.chatJSON([user("hello")], { schema: SCHEMA })).resolves.toEqual({
      topics: ["tea"],
      note: null,
    });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].path).toBe(`/model/${encodeURIComponent(MODEL)}/converse`);
  });

  it.each([
    ["a fenced reply", '```json\n{"topics":["tea"],"note":null}\n```'],
    [
      "a reply with a reasoning block",
      '<think>tea, surely</think>\n{"topics":["tea"],"note":null}',
    ],
  ])("parses %s", async (_, text) => {
    const server = await serve([converseText(text)]);
    const { llm } = adapter(server);

    await expect(llm.chatJSON([user("hello")], { schema: SCHEMA })).resolves.toEqual({
      topics: ["tea"],
      note: null,
    });
  });

  it("joins the text blocks of the reply, skipping reasoning blocks", async () => {
    const server = await serve([
      converseAnswer([
        { reasoningContent: { reasoningText: { text: "thinking", signature: "sig" } } },
        { text: '{"topics":' },
        { text: '["tea"],"note":null}' },
      ]),
    ]);
    const { llm } = adapter(server);

    await expect(llm.chatJSON([user("hello")])).resolves.toEqual({ topics: ["tea"], note: null });
  });

  it("rejects a reply that is not JSON with InvalidModelOutputError carrying the raw text, after reporting usage", async () => {
    const raw = "I think the topics are tea and cake.";
    const server = await serve([converseText(raw, { inputTokens: 7, outputTokens: 3 })]);
    const usages: LLMUsage[] = [];
    const { llm } = adapter(server, { onUsage: (usage) => usages.push(usage) });

    const error = await llm.chatJSON([user("hello")], { schema: SCHEMA }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidModelOutputError);
    expect((error as InvalidModelOutputError).raw).toBe(raw);
    expect(usages).toEqual([
      { inputTokens: 7, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 },
    ]);
  });

  it("says when a reply that is not JSON stopped at maxTokens", async () => {
    const server = await serve([
      converseText('{"topics":["te', { inputTokens: 7, outputTokens: 8 }, "max_tokens"),
    ]);
    const { llm } = adapter(server, { maxTokens: 8 });

    const error = await llm.chatJSON([user("hello")], { schema: SCHEMA }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidModelOutputError);
    expect((error as InvalidModelOutputError).reason).toContain("maxTokens (8)");
    expect(wire(server).inferenceConfig?.maxTokens).toBe(8);
  });

  it("reports usage, cache reads and writes included, with the model id and latency", async () => {
    const server = await serve([
      {
        ...converseText("{}", {
          inputTokens: 120,
          outputTokens: 30,
          cacheReadInputTokens: 1000,
          cacheWriteInputTokens: 200,
        }),
        delayMs: ANSWER_DELAY_MS,
      },
    ]);
    const calls: { usage: LLMUsage; model: string; latencyMs: number }[] = [];
    const { llm } = adapter(server, {
      onUsage: (usage, call) => calls.push({ usage, ...call }),
    });

    const started = performance.now();
    await llm.chatJSON([user("hello")]);
    const elapsed = performance.now() - started;
    expect(calls).toHaveLength(1);
    expect(calls[0].usage).toEqual({
      inputTokens: 120,
      outputTokens: 30,
      cacheReadTokens: 1000,
      cacheWriteTokens: 200,
    });
    expect(calls[0].model).toBe(MODEL);
    // The latency is the call's: at least the server's delay, at most the caller's wait.
    expect(calls[0].latencyMs).toBeGreaterThanOrEqual(ANSWER_DELAY_MS - 1);
    expect(calls[0].latencyMs).toBeLessThanOrEqual(elapsed);
  });
});

describe("BedrockConverseLLM requests", () => {
  it("puts system turns in system blocks, the rest in messages, and the schema in outputConfig.textFormat", async () => {
    const server = await serve([converseText("{}")]);
    const { llm } = adapter(server, { temperature: 0.2, maxTokens: 1000 });

    await llm.chatJSON(
      [
        { role: "system", content: "You extract topics." },
        { role: "user", content: "first" },
        { role: "assistant", content: "not JSON" },
        { role: "system", content: "Answer in JSON." },
        { role: "user", content: "again" },
      ],
      { schema: SCHEMA },
    );
    const body = wire(server);
    expect(body.system).toEqual([{ text: "You extract topics." }, { text: "Answer in JSON." }]);
    expect(body.messages).toEqual([
      { role: "user", content: [{ text: "first" }] },
      { role: "assistant", content: [{ text: "not JSON" }] },
      { role: "user", content: [{ text: "again" }] },
    ]);
    expect(body.inferenceConfig).toEqual({ maxTokens: 1000, temperature: 0.2 });
    expect(body.outputConfig?.textFormat.type).toBe("json_schema");
    expect(body.outputConfig?.textFormat.structure.jsonSchema.name).toBe("reply");
    expect(JSON.parse(body.outputConfig?.textFormat.structure.jsonSchema.schema ?? "")).toEqual(
      SCHEMA,
    );
    expect(body.toolConfig).toBeUndefined();
  });

  it("sends no system, output or tool config when there is nothing to put there", async () => {
    const server = await serve([converseText("{}")]);
    const { llm } = adapter(server);

    await llm.chatJSON([user("hello")]);
    const body = wire(server);
    expect(body.system).toBeUndefined();
    expect(body.outputConfig).toBeUndefined();
    expect(body.toolConfig).toBeUndefined();
    expect(body.inferenceConfig).toEqual({ maxTokens: 4096, temperature: 0 });
  });

  it("in tool mode, forces one tool with the schema as its input schema and answers its input", async () => {
    const input = { topics: ["tea"], note: "from the tool" };
    const server = await serve([converseToolUse("topics", input)]);
    const { llm } = adapter(server, { output: "tool", schemaName: "topics" });

    await expect(llm.chatJSON([user("hello")], { schema: SCHEMA })).resolves.toEqual(input);
    const body = wire(server);
    expect(body.toolConfig?.tools).toHaveLength(1);
    expect(body.toolConfig?.tools[0].toolSpec.name).toBe("topics");
    expect(body.toolConfig?.tools[0].toolSpec.inputSchema).toEqual({ json: SCHEMA });
    expect(body.toolConfig?.toolChoice).toEqual({ tool: { name: "topics" } });
    expect(body.outputConfig).toBeUndefined();
  });

  it("in tool mode, rejects a reply without the tool call with InvalidModelOutputError", async () => {
    const server = await serve([converseText("no tool today")]);
    const { llm } = adapter(server, { output: "tool" });

    const error = await llm.chatJSON([user("hello")], { schema: SCHEMA }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidModelOutputError);
    expect((error as InvalidModelOutputError).raw).toBe("no tool today");
  });

  it("puts the cache point after cachePrefix code units of the last user turn that has one", async () => {
    const shared = "Instructions and the excerpt so far. ";
    const fresh = "The newest turns.";
    const server = await serve([converseText("{}")]);
    const { llm } = adapter(server);

    await llm.chatJSON([
      { role: "system", content: "You extract topics." },
      user("an earlier prompt", 5),
      { role: "assistant", content: "{}" },
      user(shared + fresh, shared.length),
    ]);
    const body = wire(server);
    expect(body.messages.map((m) => m.content)).toEqual([
      [{ text: "an earlier prompt" }],
      [{ text: "{}" }],
      [{ text: shared }, { cachePoint: { type: "default" } }, { text: fresh }],
    ]);
    expect(body.system).toEqual([{ text: "You extract topics." }]);
  });

  it("puts the cache point in an earlier user turn when the last one has no cachePrefix", async () => {
    const shared = "The prompt of the first request. ";
    const server = await serve([converseText("{}")]);
    const { llm } = adapter(server);

    await llm.chatJSON([
      user(`${shared}Its excerpt.`, shared.length),
      { role: "assistant", content: "not JSON" },
      user("That reply was not valid."),
    ]);
    expect(wire(server).messages.map((m) => m.content)).toEqual([
      [{ text: shared }, { cachePoint: { type: "default" } }, { text: "Its excerpt." }],
      [{ text: "not JSON" }],
      [{ text: "That reply was not valid." }],
    ]);
  });

  it("puts the cache point at the end when the prefix is the whole content, and nowhere without a prefix", async () => {
    const server = await serve([converseText("{}"), converseText("{}")]);
    const { llm } = adapter(server);

    await llm.chatJSON([user("all of it is shared", "all of it is shared".length)]);
    await llm.chatJSON([user("nothing is shared", 0)]);
    expect(wire(server, 0).messages[0].content).toEqual([
      { text: "all of it is shared" },
      { cachePoint: { type: "default" } },
    ]);
    expect(wire(server, 1).messages[0].content).toEqual([{ text: "nothing is shared" }]);
  });

  it("does not split a surrogate pair at the cache point", async () => {
    const server = await serve([converseText("{}")]);
    const { llm } = adapter(server);

    // "ab" then U+1F375 (two code units); a prefix of 3 ends between them.
    await llm.chatJSON([user("ab\u{1F375}cd", 3)]);
    expect(wire(server).messages[0].content).toEqual([
      { text: "ab" },
      { cachePoint: { type: "default" } },
      { text: "\u{1F375}cd" },
    ]);
  });

  it("refuses a role Converse has no place for, without a request", async () => {
    const server = await serve([converseText("{}")]);
    const { llm } = adapter(server);

    const error = await llm
      .chatJSON([user("hello"), { role: "tool", content: "output" }])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LLMError);
    expect((error as LLMError).retryable).toBe(false);
    expect((error as LLMError).message).toContain("messages[1].role");
    expect(server.requests).toHaveLength(0);
  });
});

describe("BedrockConverseLLM failures", () => {
  it("retries a 429 ThrottlingException and then succeeds", async () => {
    const server = await serve([
      {
        ...converseError(429, "ThrottlingException"),
        headers: { "x-amzn-errortype": "ThrottlingException", "retry-after": "0" },
      },
      converseText('{"topics":[],"note":null}'),
    ]);
    const { llm, sleeps } = adapter(server, { baseDelayMs: 100 });

    await expect(llm.chatJSON([user("hello")])).resolves.toEqual({ topics: [], note: null });
    expect(server.requests).toHaveLength(2);
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThanOrEqual(0);
    expect(sleeps[0]).toBeLessThanOrEqual(100);
  });

  it("retries on top of the SDK's own retries", async () => {
    const server = await serve([
      converseError(429, "ThrottlingException"),
      converseError(429, "ThrottlingException"),
      converseText("{}"),
    ]);
    const sleeps: number[] = [];
    const llm = new BedrockConverseLLM({
      client: testBedrockClient(server.url, 2),
      modelId: MODEL,
      maxAttempts: 2,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });

    await expect(llm.chatJSON([user("hello")])).resolves.toEqual({});
    // The SDK tried twice within the adapter's first attempt, then the adapter sent anew.
    expect(server.requests.map((r) => r.headers["amz-sdk-request"])).toEqual([
      "attempt=1; max=2",
      "attempt=2; max=2",
      "attempt=1; max=2",
    ]);
    expect(sleeps).toHaveLength(1);
  });

  it("rejects persistent 5xx with a retryable LLMError after maxAttempts, backing off exponentially up to maxDelayMs", async () => {
    const server = await serve([
      converseError(500, "InternalServerException"),
      converseError(503, "ServiceUnavailableException"),
      converseError(500, "InternalServerException"),
      converseError(500, "InternalServerException"),
      converseText("{}"),
    ]);
    const { llm, sleeps } = adapter(server, {
      maxAttempts: 4,
      baseDelayMs: 100,
      maxDelayMs: 250,
      random: () => 1,
    });

    const error = await llm.chatJSON([user("hello")]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LLMError);
    expect((error as LLMError).retryable).toBe(true);
    expect((error as LLMError).status).toBe(500);
    expect((error as LLMError).message).toContain("InternalServerException");
    expect(server.requests).toHaveLength(4);
    expect(sleeps).toEqual([100, 200, 250]);
  });

  it.each([
    [400, "ValidationException"],
    [403, "AccessDeniedException"],
    [404, "ResourceNotFoundException"],
  ])("rejects a %i %s with a non-retryable LLMError, without retries", async (status, type) => {
    const server = await serve([converseError(status, type), converseText("{}")]);
    const { llm, sleeps } = adapter(server);

    const error = await llm.chatJSON([user("hello")]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LLMError);
    expect((error as LLMError).retryable).toBe(false);
    expect((error as LLMError).status).toBe(status);
    expect((error as LLMError).message).toContain(type);
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toHaveLength(0);
  });

  it("retries a network error, then rejects with a retryable LLMError", async () => {
    const closed = await startConverseServer([]);
    await closed.close();
    const { llm, sleeps } = adapter(closed, { maxAttempts: 2 });

    const error = await llm.chatJSON([user("hello")]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LLMError);
    expect((error as LLMError).retryable).toBe(true);
    expect((error as LLMError).kind).toBe("connection");
    expect(sleeps).toHaveLength(1);
  });

  it("abandons an attempt after timeoutMs and retries it", async () => {
    const server = await serve([{ ...converseText("{}"), delayMs: 60_000 }, converseText("[1]")]);
    const { llm } = adapter(server, { timeoutMs: 200 });

    await expect(llm.chatJSON([user("hello")])).resolves.toEqual([1]);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0].abandoned).toBe(true);
  });

  it("rejects a call that keeps timing out with a retryable LLMError naming timeoutMs", async () => {
    const server = await serve([
      { ...converseText("{}"), delayMs: 60_000 },
      { ...converseText("{}"), delayMs: 60_000 },
    ]);
    const { llm } = adapter(server, { timeoutMs: 100, maxAttempts: 2 });

    const error = await llm.chatJSON([user("hello")]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LLMError);
    expect((error as LLMError).retryable).toBe(true);
    expect((error as LLMError).kind).toBe("timeout");
    expect((error as LLMError).message).toContain("timeoutMs 100");
    expect(server.requests).toHaveLength(2);
  });
});

describe("BedrockConverseLLM on a stalled endpoint", () => {
  const servers: RawServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it.each([
    ["trickles a byte at a time", trickle(20)],
    ["never answers", silent()],
  ])("that %s fails at the call's deadline, named, retryable", async (_, handle) => {
    const server = await startRawHttp2Server(handle);
    servers.push(server);
    const llm = new BedrockConverseLLM({
      // The SDK's own retries too: the deadline is the whole call's.
      client: testBedrockClient(server.url, 3),
      modelId: MODEL,
      // Each attempt alone would wait a minute, four times over.
      timeoutMs: 60_000,
      maxAttempts: 4,
      deadlineMs: 300,
      sleep: async () => {},
    });

    const error = await llm.chatJSON([user("hi")]).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LLMError);
    expect(error).toMatchObject({ kind: "timeout", retryable: true });
    expect((error as Error).message).toMatch(
      /^bedrock converse \(.*\): no complete reply within deadlineMs 300 \(the whole call/,
    );
    expect(server.requests.length).toBeGreaterThan(0);
  });
});

describe("BedrockConverseLLM redirects", () => {
  /** A redirect to `location`, as a misconfigured endpoint or a proxy would answer. */
  const redirect = (location: string) => ({ status: 307, headers: { location }, body: "" });

  it("never carries a request to another origin a 307 points at", async () => {
    const elsewhere = await serve([converseText("{}")]);
    const path = `/model/${encodeURIComponent(MODEL)}/converse`;
    const server = await serve([redirect(`${elsewhere.url}${path}`), converseText("{}")]);
    const { llm, sleeps } = adapter(server);

    const error = await llm.chatJSON([user("the chat text")]).catch((e: unknown) => e);

    expect(error).toMatchObject({ name: "LLMError", status: 307, retryable: false });
    expect((error as Error).message).toMatch(
      /answered 307, a redirect, which is not followed: the request went nowhere else \(point the endpoint at the Bedrock runtime that answers\)/,
    );
    expect(elsewhere.requests).toEqual([]);
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it("ends a 307 loop in one named error, without repeating the request", async () => {
    const server = await serve((request) => redirect(request.path));
    const llm = new BedrockConverseLLM({
      // The SDK's retries and the adapter's: neither repeats a redirect.
      client: testBedrockClient(server.url, 3),
      modelId: MODEL,
      maxAttempts: 4,
      sleep: async () => {},
    });

    const error = await llm.chatJSON([user("hi")]).catch((e: unknown) => e);

    expect(error).toMatchObject({ name: "LLMError", status: 307, retryable: false });
    expect((error as Error).message).toContain("a redirect, which is not followed");
    expect(server.requests).toHaveLength(1);
  });
});

describe("BedrockConverseLLM aborts", () => {
  it("aborts a slow reply promptly through the signal", async () => {
    const server = await serve([{ ...converseText("{}"), delayMs: 60_000 }]);
    const { llm } = adapter(server);
    const controller = new AbortController();
    const reason = new Error("shutting down");

    const call = llm
      .chatJSON([user("hello")], { signal: controller.signal })
      .catch((e: unknown) => e);
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
    const abortedAt = performance.now();
    controller.abort(reason);
    const error = await call;

    expect(performance.now() - abortedAt).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(LLMError);
    expect((error as LLMError).retryable).toBe(false);
    expect((error as LLMError).cause).toBe(reason);
    await vi.waitFor(() => expect(server.requests[0].abandoned).toBe(true));
  });

  it("aborts during a backoff wait", async () => {
    const server = await serve([converseError(429, "ThrottlingException"), converseText("{}")]);
    const controller = new AbortController();
    const llm = new BedrockConverseLLM({
      client: testBedrockClient(server.url),
      modelId: MODEL,
      // A wait that only ends by the abort.
      sleep: () => {
        controller.abort();
        return new Promise(() => {});
      },
    });

    const error = await llm
      .chatJSON([user("hello")], { signal: controller.signal })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LLMError);
    expect((error as LLMError).retryable).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it("sends nothing when the signal is already aborted", async () => {
    const server = await serve([converseText("{}")]);
    const { llm } = adapter(server);

    const error = await llm
      .chatJSON([user("hello")], { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LLMError);
    expect((error as LLMError).retryable).toBe(false);
    expect(server.requests).toHaveLength(0);
  });
});

describe("BedrockConverseLLM options", () => {
  it.each([
    [{ modelId: "" }, "modelId"],
    [{ maxAttempts: 0 }, "maxAttempts"],
    [{ maxTokens: 1.5 }, "maxTokens"],
    [{ temperature: -1 }, "temperature"],
    [{ timeoutMs: 0 }, "timeoutMs"],
    [{ deadlineMs: 0 }, "deadlineMs"],
    [{ deadlineMs: 2 ** 31 }, "deadlineMs"],
    [{ schemaName: "has space" }, "schemaName"],
    [{ output: "xml" as "tool" }, "output"],
  ])("throws a RangeError naming a bad option (%o)", (options, name) => {
    expect(() => new BedrockConverseLLM({ modelId: MODEL, ...options })).toThrow(
      new RegExp(`^${name} `),
    );
  });
});
