import type { ServerResponse } from "node:http";
import type { LLMUsage } from "convoseg/extraction";
import { InvalidModelOutputError, LLMError } from "convoseg/extraction";
import { OpenAICompatibleLLM, type OpenAICompatibleLLMOptions } from "convoseg/extraction/llm";
import OpenAI from "openai";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  chatCompletion,
  chatError,
  closedAfterEach,
  PORTABLE_SCHEMA as SCHEMA,
  type ScriptedServer,
  startChatCompletionsServer,
  userTurn as user,
} from "../../../support/llm-servers.js";
import { type RawServer, silent, startRawServer, trickle } from "../../../support/raw-servers.js";

const MODEL = "test-model";
const API_KEY = "test-key";

/** The parts of a chat completions request body the tests read. */
interface ChatWire {
  model: string;
  messages: Record<string, unknown>[];
  temperature?: number;
  max_tokens?: number;
  response_format?: unknown;
}

const serve = closedAfterEach(startChatCompletionsServer);

function adapter(
  server: ScriptedServer,
  options: Partial<OpenAICompatibleLLMOptions> = {},
): OpenAICompatibleLLM {
  return new OpenAICompatibleLLM({
    baseURL: `${server.url}/v1`,
    apiKey: API_KEY,
    model: MODEL,
    ...options,
  });
}

const wire = (server: ScriptedServer, index = 0) => server.requests[index].body as ChatWire;
/** A header asking the client to retry after `ms` milliseconds. */
const retryAfterMs = (ms: number) => ({ "retry-after-ms": String(ms) });

/** How long the scripted server waits before answering where a test measures latency. */
const ANSWER_DELAY_MS = 40;

describe("OpenAICompatibleLLM replies", () => {
  it("resolves to the parsed JSON of the reply", async () => {
    const server = await serve([chatCompletion('{"topics":["tea"],"note":null}')]);

    await expect(adapter(server).chatJSON([user("hello")], { schema: SCHEMA })).resolves.toEqual({
      topics: ["tea"],
      note: null,
    });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].path).toBe("/v1/chat/completions");
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it.each([
    ["a fenced reply", '```json\n{"topics":["tea"],"note":null}\n```'],
    [
      "a reply with a reasoning block",
      '<think>tea, surely</think>\n{"topics":["tea"],"note":null}',
    ],
  ])("parses %s", async (_, text) => {
    const server = await serve([chatCompletion(text)]);

    await expect(adapter(server).chatJSON([user("hello")], { schema: SCHEMA })).resolves.toEqual({
      topics: ["tea"],
      note: null,
    });
  });

  it("rejects a reply that is not JSON with InvalidModelOutputError carrying the raw text, after reporting usage", async () => {
    const raw = "The topics are tea and cake.";
    const server = await serve([
      chatCompletion(raw, { usage: { prompt_tokens: 7, completion_tokens: 3 } }),
    ]);
    const usages: LLMUsage[] = [];
    const llm = adapter(server, { onUsage: (usage) => usages.push(usage) });

    const error = await llm.chatJSON([user("hello")], { schema: SCHEMA }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidModelOutputError);
    expect((error as InvalidModelOutputError).raw).toBe(raw);
    expect(usages).toEqual([
      { inputTokens: 7, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 },
    ]);
  });

  it("rejects a refusal with InvalidModelOutputError carrying the refusal", async () => {
    const server = await serve([chatCompletion(null, { refusal: "I cannot help with that." })]);

    const error = await adapter(server)
      .chatJSON([user("hello")], { schema: SCHEMA })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidModelOutputError);
    expect((error as InvalidModelOutputError).raw).toBe("I cannot help with that.");
  });

  it("says when a reply that is not JSON stopped at the token limit", async () => {
    const server = await serve([chatCompletion('{"topics":["te', { finishReason: "length" })]);

    const error = await adapter(server, { maxTokens: 8 })
      .chatJSON([user("hello")], { schema: SCHEMA })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidModelOutputError);
    expect((error as InvalidModelOutputError).reason).toContain("maxTokens 8");
    expect(wire(server).max_tokens).toBe(8);
  });

  it("reports usage, OpenAI's cached_tokens as cache reads, with the model and latency", async () => {
    const server = await serve([
      {
        ...chatCompletion("{}", {
          usage: {
            prompt_tokens: 1200,
            completion_tokens: 40,
            prompt_tokens_details: { cached_tokens: 1024 },
          },
        }),
        delayMs: ANSWER_DELAY_MS,
      },
      {
        ...chatCompletion("{}", {
          usage: {
            prompt_tokens: 1200,
            completion_tokens: 40,
            prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 1100 },
          },
        }),
        delayMs: ANSWER_DELAY_MS,
      },
    ]);
    const calls: { usage: LLMUsage; model: string; latencyMs: number }[] = [];
    const llm = adapter(server, { onUsage: (usage, call) => calls.push({ usage, ...call }) });

    const elapsed: number[] = [];
    for (let i = 0; i < 2; i++) {
      const started = performance.now();
      await llm.chatJSON([user("hello")]);
      elapsed.push(performance.now() - started);
    }
    expect(calls.map((c) => c.usage)).toEqual([
      { inputTokens: 1200, outputTokens: 40, cacheReadTokens: 1024, cacheWriteTokens: 0 },
      { inputTokens: 1200, outputTokens: 40, cacheReadTokens: 0, cacheWriteTokens: 1100 },
    ]);
    expect(calls.map((c) => c.model)).toEqual([MODEL, MODEL]);
    // Each latency is its call's: at least the server's delay, at most the caller's wait.
    calls.forEach((call, i) => {
      expect(call.latencyMs).toBeGreaterThanOrEqual(ANSWER_DELAY_MS - 1);
      expect(call.latencyMs).toBeLessThanOrEqual(elapsed[i]);
    });
  });

  it("reports DeepSeek's prompt_cache_hit_tokens as cache reads", async () => {
    const server = await serve([
      chatCompletion("{}", {
        usage: { prompt_tokens: 900, completion_tokens: 20, prompt_cache_hit_tokens: 640 },
      }),
    ]);
    const usages: LLMUsage[] = [];

    await adapter(server, { onUsage: (usage) => usages.push(usage) }).chatJSON([user("hello")]);
    expect(usages).toEqual([
      { inputTokens: 900, outputTokens: 20, cacheReadTokens: 640, cacheWriteTokens: 0 },
    ]);
  });
});

describe("OpenAICompatibleLLM requests", () => {
  it("sends the turns in order as they are, and the schema as a strict json_schema response_format", async () => {
    const server = await serve([chatCompletion("{}")]);

    await adapter(server).chatJSON(
      [
        { role: "system", content: "You extract topics." },
        user("first", 3),
        { role: "assistant", content: "not JSON" },
        user("again"),
      ],
      { schema: SCHEMA },
    );
    const body = wire(server);
    expect(body.model).toBe(MODEL);
    // No cachePrefix on the wire: the API has no cache points.
    expect(body.messages).toEqual([
      { role: "system", content: "You extract topics." },
      { role: "user", content: "first" },
      { role: "assistant", content: "not JSON" },
      { role: "user", content: "again" },
    ]);
    expect(body.temperature).toBe(0);
    expect(body.max_tokens).toBe(4096);
    expect(body.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "reply", schema: SCHEMA, strict: true },
    });
  });

  it("sends no response_format without a schema, and no temperature when it is null", async () => {
    const server = await serve([chatCompletion("{}")]);

    await adapter(server, { temperature: null }).chatJSON([user("hello")]);
    expect(wire(server)).not.toHaveProperty("response_format");
    expect(wire(server)).not.toHaveProperty("temperature");
  });

  it("always sends an output-token limit: 4096 unless told", async () => {
    const server = await serve([chatCompletion("{}"), chatCompletion("{}")]);

    await adapter(server).chatJSON([user("hello")]);
    await adapter(server, { maxTokens: 300 }).chatJSON([user("hello")]);
    expect(wire(server, 0).max_tokens).toBe(4096);
    expect(wire(server, 1).max_tokens).toBe(300);
  });

  it("in json_object mode, asks for a JSON object and states the schema in a first system message", async () => {
    const server = await serve([chatCompletion('{"topics":[],"note":null}')]);
    const llm = adapter(server, { responseFormat: "json_object" });

    await expect(
      llm.chatJSON(
        [
          { role: "system", content: "You extract topics." },
          { role: "user", content: "hello" },
        ],
        { schema: SCHEMA },
      ),
    ).resolves.toEqual({ topics: [], note: null });
    const body = wire(server);
    expect(body.response_format).toEqual({ type: "json_object" });
    expect(body.messages).toHaveLength(3);
    expect(body.messages[0].role).toBe("system");
    expect(body.messages[0].content).toContain(JSON.stringify(SCHEMA));
    expect(body.messages.slice(1)).toEqual([
      { role: "system", content: "You extract topics." },
      { role: "user", content: "hello" },
    ]);
  });

  it("refuses a role the API has no place for, without a request", async () => {
    const server = await serve([chatCompletion("{}")]);

    const error = await adapter(server)
      .chatJSON([user("hello"), { role: "tool", content: "output" }])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LLMError);
    expect((error as LLMError).retryable).toBe(false);
    expect((error as LLMError).message).toContain("messages[1].role");
    expect(server.requests).toHaveLength(0);
  });

  it("works with an injected client, applying its own maxRetries per request", async () => {
    const server = await serve([chatError(500, retryAfterMs(1)), chatCompletion("{}")]);
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: API_KEY, maxRetries: 5 });
    const llm = new OpenAICompatibleLLM({ client, model: MODEL, maxRetries: 0 });

    const error = await llm.chatJSON([user("hello")]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LLMError);
    expect((error as LLMError).status).toBe(500);
    expect(server.requests.length).toBeGreaterThan(0);
  });
});

describe("OpenAICompatibleLLM failures", () => {
  it.each([
    ["retry-after-ms", retryAfterMs(1200), 1200],
    ["retry-after", { "retry-after": "1" }, 1000],
  ])("retries a 429 after the wait %s asks, then succeeds", async (_, headers, waitMs) => {
    const server = await serve([
      chatError(429, headers),
      chatCompletion('{"topics":[],"note":null}'),
    ]);

    await expect(adapter(server).chatJSON([user("hello")])).resolves.toEqual({
      topics: [],
      note: null,
    });
    expect(server.requests).toHaveLength(2);
    const waited = server.requests[1].receivedAt - server.requests[0].receivedAt;
    // Longer than the SDK's own first backoff (at most 500 ms): the header set the wait.
    expect(waited).toBeGreaterThanOrEqual(waitMs - 1);
  });

  it("rejects persistent 5xx with a retryable LLMError after maxRetries", async () => {
    const server = await serve([
      chatError(500, retryAfterMs(1)),
      chatError(503, retryAfterMs(1)),
      chatError(500, retryAfterMs(1)),
      chatCompletion("{}"),
    ]);

    const error = await adapter(server, { maxRetries: 2 })
      .chatJSON([user("hello")])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LLMError);
    expect((error as LLMError).retryable).toBe(true);
    expect((error as LLMError).status).toBe(500);
    expect((error as LLMError).kind).toBe("status");
    expect((error as LLMError).message).toContain("maxRetries 2");
    expect(server.requests).toHaveLength(3);
  });

  it.each([400, 401, 403, 404])(
    "rejects a %i with a non-retryable LLMError, without retries",
    async (status) => {
      const server = await serve([chatError(status), chatCompletion("{}")]);

      const error = await adapter(server)
        .chatJSON([user("hello")])
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LLMError);
      expect((error as LLMError).retryable).toBe(false);
      expect((error as LLMError).status).toBe(status);
      expect(server.requests).toHaveLength(1);
    },
  );

  it("retries a request that timed out", async () => {
    const server = await serve([
      { ...chatCompletion("{}"), delayMs: 60_000 },
      chatCompletion("[1]"),
    ]);

    await expect(
      adapter(server, { timeoutMs: 200, maxRetries: 1 }).chatJSON([user("hello")]),
    ).resolves.toEqual([1]);
    expect(server.requests).toHaveLength(2);
    await vi.waitFor(() => expect(server.requests[0].abandoned).toBe(true));
  });

  it("rejects a timeout past the retries with a retryable LLMError naming timeoutMs", async () => {
    const server = await serve([{ ...chatCompletion("{}"), delayMs: 60_000 }]);

    const error = await adapter(server, { timeoutMs: 100, maxRetries: 0 })
      .chatJSON([user("hello")])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LLMError);
    expect((error as LLMError).retryable).toBe(true);
    expect((error as LLMError).kind).toBe("timeout");
    expect((error as LLMError).message).toContain("timeoutMs 100");
  });

  it("rejects a connection error with a retryable LLMError naming the system error", async () => {
    const closed = await startChatCompletionsServer([]);
    await closed.close();

    const error = await adapter(closed, { maxRetries: 0 })
      .chatJSON([user("hello")])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LLMError);
    expect((error as LLMError).retryable).toBe(true);
    expect((error as LLMError).status).toBeUndefined();
    expect((error as LLMError).kind).toBe("connection");
    expect((error as LLMError).message).toContain("connection failed: ECONNREFUSED");
  });
});

describe("OpenAICompatibleLLM on a stalled endpoint", () => {
  const servers: RawServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  const raw = async (handle: Parameters<typeof startRawServer>[0]) => {
    const server = await startRawServer(handle);
    servers.push(server);
    return server;
  };

  it.each([
    ["trickles a byte at a time", trickle(20)],
    ["never answers", silent()],
  ])("that %s fails at the call's deadline, named, retryable", async (_, handle) => {
    const server = await raw(handle);
    const llm = new OpenAICompatibleLLM({
      baseURL: `${server.url}/v1`,
      apiKey: API_KEY,
      model: MODEL,
      // The SDK's own timeout alone would wait 120 s per request, and retry.
      maxRetries: 3,
      deadlineMs: 300,
    });

    const error = await llm.chatJSON([user("hi")]).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LLMError);
    expect(error).toMatchObject({ kind: "timeout", retryable: true });
    expect((error as Error).message).toMatch(
      /no complete reply within deadlineMs 300 \(the whole call/,
    );
    expect(server.requests.length).toBeGreaterThan(0);
  });
});

describe("OpenAICompatibleLLM redirects", () => {
  const servers: RawServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  const raw = async (handle: Parameters<typeof startRawServer>[0]) => {
    const server = await startRawServer(handle);
    servers.push(server);
    return server;
  };
  const redirect =
    (status: number, to: () => string) => (_q: unknown, response: ServerResponse) => {
      response.writeHead(status, { location: to() }).end();
    };
  const completion = (response: ServerResponse) =>
    response.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        id: "c",
        object: "chat.completion",
        created: 0,
        model: MODEL,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: '{"ok":true}' },
            finish_reason: "stop",
          },
        ],
      }),
    );
  const llmAt = (url: string) =>
    new OpenAICompatibleLLM({ baseURL: `${url}/v1`, apiKey: API_KEY, model: MODEL });

  it("fails once, named and not retried, on a 307 loop", async () => {
    const server = await raw(redirect(307, () => "/v1/chat/completions"));

    const error = await llmAt(server.url)
      .chatJSON([user("hi")])
      .catch((e: unknown) => e);

    expect(error).toMatchObject({ name: "LLMError", status: 307, retryable: false });
    expect((error as Error).message).toMatch(/more than 3 redirects from .* \(a redirect loop\?\)/);
    // The first request and 3 redirects followed; no retry of the whole.
    expect(server.requests).toHaveLength(4);
  });

  it("follows a 302 to the same origin as a POST with its body", async () => {
    let index = 0;
    const server = await raw((_q, response) => {
      if (index++ === 0) redirect(302, () => "/moved/chat/completions")(_q, response);
      else completion(response);
    });

    expect(await llmAt(server.url).chatJSON([user("hi")])).toEqual({ ok: true });

    expect(server.requests.map((r) => [r.method, r.path])).toEqual([
      ["POST", "/v1/chat/completions"],
      ["POST", "/moved/chat/completions"],
    ]);
    expect(server.requests[1].body).toBe(server.requests[0].body);
    expect(server.requests[1].body).toContain('"hi"');
  });

  it("never follows a 307 to another origin, which receives nothing", async () => {
    const elsewhere = await raw((_q, response) => completion(response));
    const server = await raw(redirect(307, () => `${elsewhere.url}/v1/chat/completions`));

    const error = await llmAt(server.url)
      .chatJSON([user("hi")])
      .catch((e: unknown) => e);

    expect(error).toMatchObject({ name: "LLMError", status: 307, retryable: false });
    expect((error as Error).message).toContain(`redirected to another origin, ${elsewhere.url}`);
    expect(elsewhere.requests).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });
});

describe("OpenAICompatibleLLM aborts", () => {
  it("aborts a slow reply promptly through the signal", async () => {
    const server = await serve([{ ...chatCompletion("{}"), delayMs: 60_000 }]);
    const controller = new AbortController();
    const reason = new Error("shutting down");

    const call = adapter(server)
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

  it("aborts during the wait before a retry", async () => {
    const server = await serve([chatError(429, retryAfterMs(30_000)), chatCompletion("{}")]);
    const controller = new AbortController();

    const call = adapter(server)
      .chatJSON([user("hello")], { signal: controller.signal })
      .catch((e: unknown) => e);
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
    const abortedAt = performance.now();
    controller.abort();
    const error = await call;

    expect(performance.now() - abortedAt).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(LLMError);
    expect((error as LLMError).retryable).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it("sends nothing when the signal is already aborted", async () => {
    const server = await serve([chatCompletion("{}")]);

    const error = await adapter(server)
      .chatJSON([user("hello")], { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LLMError);
    expect((error as LLMError).retryable).toBe(false);
    expect(server.requests).toHaveLength(0);
  });
});

describe("OpenAICompatibleLLM options", () => {
  it.each([
    [{ model: "" }, "model"],
    [{ responseFormat: "text" as "json_object" }, "responseFormat"],
    [{ schemaName: "has space" }, "schemaName"],
    [{ maxTokens: 0 }, "maxTokens"],
    [{ temperature: Number.NaN }, "temperature"],
    [{ maxRetries: -1 }, "maxRetries"],
    [{ timeoutMs: 1.5 }, "timeoutMs"],
  ])("throws a RangeError naming a bad option (%o)", (options, name) => {
    expect(() => new OpenAICompatibleLLM({ model: MODEL, apiKey: API_KEY, ...options })).toThrow(
      new RegExp(`^${name} `),
    );
  });

  it("requires an API key when OPENAI_API_KEY is not set", () => {
    vi.stubEnv("OPENAI_API_KEY", "");
    expect(() => new OpenAICompatibleLLM({ model: MODEL })).toThrow(/^apiKey /);
  });
});
