import { InvalidModelOutputError, LLMError } from "convoseg/extraction";
import { OpenAICompatibleLLM } from "convoseg/extraction/llm";
import type { ExtractionOutcome, SegmentExtractor } from "convoseg/knowledge/write";
import { describe, expect, it } from "vitest";
import {
  ExtractionStoppedError,
  LLM_FAILURE_BUDGET,
  LLMFailureBudget,
  type LLMFailureCause,
  llmFailureCause,
} from "../../local/llm-failures.js";
import type { LocalModel } from "../../local/model.js";
import {
  chatCompletion,
  chatError,
  closedAfterEach,
  closedPort,
  startChatCompletionsServer,
} from "../support/llm-servers.js";

type ExtractorPort = Pick<SegmentExtractor, "extract">;

const OPENAI: LocalModel = {
  extractor: "openai",
  modelId: "gpt-4o-mini",
  endpoint: "http://127.0.0.1:8080/v1",
};
const BEDROCK: LocalModel = { extractor: "bedrock", modelId: "amazon.nova-lite-v1:0" };

const refused = () =>
  new LLMError("connection failed", true, undefined, {
    kind: "connection",
    cause: new TypeError("fetch failed", {
      cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8080"), {
        code: "ECONNREFUSED",
      }),
    }),
  });
const status = (n: number) => new LLMError(`${n} from the provider`, n >= 500, n);

describe("llmFailureCause", () => {
  it.each([
    [
      refused(),
      "connection:ECONNREFUSED",
      /^http:\/\/127\.0\.0\.1:8080\/v1 refused the connection/,
    ],
    [
      new LLMError("x", true, undefined, {
        kind: "connection",
        cause: new AggregateError([Object.assign(new Error("dns"), { code: "ENOTFOUND" })]),
      }),
      "connection:ENOTFOUND",
      /the host of .* was not found \(ENOTFOUND\)/,
    ],
    [
      new LLMError("slow", true, undefined, { kind: "timeout" }),
      "timeout",
      /did not answer in time/,
    ],
    [status(401), "status:401", /refused the credentials \(401 Unauthorized\)/],
    [status(403), "status:403", /refused access \(403 Forbidden\)/],
    [status(404), "status:404", /has no model "gpt-4o-mini", or no chat completions API there/],
    [status(429), "status:429", /kept throttling \(429/],
    [status(503), "status:503", /server error \(503\)/],
    [status(400), "status:400", /refused the request \(400\); a retry cannot succeed/],
    [
      new LLMError("400 This model's maximum context length is 8192 tokens", false, 400),
      "context-length",
      /does not fit model "gpt-4o-mini"'s context \(400\)/,
    ],
    [
      new InvalidModelOutputError('not JSON (Unexpected token, "secret chat" is not valid)', "x"),
      "invalid-output",
      /did not reply with the JSON asked for, even after one repair request/,
    ],
  ])("names %s", (error, key, what) => {
    const cause = llmFailureCause(error, OPENAI) as LLMFailureCause;
    expect(cause.key).toBe(key);
    expect(cause.what).toMatch(what);
    expect(cause.hint).not.toBe("");
  });

  it("tells what to do for the provider at hand", () => {
    expect(llmFailureCause(status(401), OPENAI)?.hint).toMatch(/OPENAI_API_KEY/);
    expect(llmFailureCause(status(401), BEDROCK)?.hint).toMatch(/AWS credentials/);
    expect(llmFailureCause(status(404), OPENAI)?.hint).toMatch(/--model.*\/v1/);
    expect(llmFailureCause(refused(), OPENAI)?.hint).toMatch(/--llm-endpoint/);
    const noCredentials = new LLMError("bedrock converse: no credentials", false, undefined, {
      cause: Object.assign(new Error("Could not load credentials"), {
        name: "CredentialsProviderError",
      }),
    });
    expect(llmFailureCause(noCredentials, BEDROCK)).toMatchObject({
      key: "credentials",
      what: "no AWS credentials were found for Bedrock",
    });
  });

  it("never quotes an invalid reply, which a parser's message may carry", () => {
    const error = new InvalidModelOutputError(
      'not JSON ("secret chat" is not valid)',
      "secret chat",
    );
    expect(JSON.stringify(llmFailureCause(error, OPENAI))).not.toContain("secret");
  });

  it("is undefined for what is not a failed call: an abort, a table's failure", () => {
    expect(llmFailureCause(new LLMError("a", false, undefined, { kind: "aborted" }), OPENAI)).toBe(
      undefined,
    );
    expect(llmFailureCause(new Error("ResourceNotFoundException"), OPENAI)).toBe(undefined);
  });
});

describe("llmFailureCause of what the adapters throw", () => {
  const startServer = closedAfterEach(startChatCompletionsServer);
  const adapter = (url: string, timeoutMs = 120_000) =>
    new OpenAICompatibleLLM({ baseURL: url, apiKey: "k", model: "m", maxRetries: 0, timeoutMs });
  const fail = (llm: OpenAICompatibleLLM) =>
    llm.chatJSON([{ role: "user", content: "hello" }]).catch((e: unknown) => e);
  const model = (endpoint: string): LocalModel => ({ extractor: "openai", modelId: "m", endpoint });

  it("names a server that does not answer in time", async () => {
    const server = await startServer([{ ...chatCompletion("{}"), delayMs: 60_000 }]);
    const url = `${server.url}/v1`;
    expect(llmFailureCause(await fail(adapter(url, 100)), model(url))).toMatchObject({
      key: "timeout",
      what: `${url} did not answer in time (timed out, after the client's retries)`,
    });
  });

  it("names a closed port, and a 404", async () => {
    const closed = `http://127.0.0.1:${await closedPort()}/v1`;
    expect(llmFailureCause(await fail(adapter(closed)), model(closed))?.what).toBe(
      `${closed} refused the connection (ECONNREFUSED)`,
    );
    const server = await startServer([chatError(404, {}, "The model `m` does not exist")]);
    const url = `${server.url}/v1`;
    expect(llmFailureCause(await fail(adapter(url)), model(url))).toMatchObject({
      key: "status:404",
      detail: expect.stringContaining("The model `m` does not exist"),
    });
  });
});

describe("LLMFailureBudget", () => {
  const outcome = {} as ExtractionOutcome;
  /** An extractor failing with each error in turn, succeeding for `undefined`. */
  function scripted(errors: (unknown | undefined)[]) {
    let calls = 0;
    return {
      calls: () => calls,
      extractor: {
        extract: async () => {
          const error = errors[calls++];
          if (error !== undefined) throw error;
          return outcome;
        },
      },
    };
  }
  const segment = {} as Parameters<ExtractorPort["extract"]>[0];
  const attempt = (extractor: ExtractorPort) =>
    extractor.extract(segment, []).then(
      () => "ok",
      (e: unknown) => e,
    );

  it("reports each cause once and stops after the budget's failures in a row, then calls nothing", async () => {
    const heard: string[] = [];
    const budget = new LLMFailureBudget({ model: OPENAI, onFailure: (c) => heard.push(c.key) });
    const script = scripted(Array.from({ length: 10 }, refused));
    const guarded = budget.guard(script.extractor);
    for (let i = 0; i < LLM_FAILURE_BUDGET; i++) {
      expect(await attempt(guarded)).toBeInstanceOf(LLMError);
    }
    expect(budget.stopped).toMatchObject({
      cause: { key: "connection:ECONNREFUSED" },
      failures: LLM_FAILURE_BUDGET,
    });
    expect(await attempt(guarded)).toBeInstanceOf(ExtractionStoppedError);
    expect(script.calls()).toBe(LLM_FAILURE_BUDGET);
    expect(heard).toEqual(["connection:ECONNREFUSED"]);
  });

  it("starts counting again after a success, a reply that is not JSON, or another cause", async () => {
    const heard: string[] = [];
    const budget = new LLMFailureBudget({
      model: OPENAI,
      limit: 2,
      onFailure: (c) => heard.push(c.key),
    });
    const guarded = budget.guard(
      scripted([
        refused(),
        undefined,
        refused(),
        new InvalidModelOutputError("not JSON", "{"),
        refused(),
        status(500),
        refused(),
        status(500),
        status(500),
      ]).extractor,
    );
    for (let i = 0; i < 8; i++) {
      await attempt(guarded);
      expect(budget.stopped, `after attempt ${i + 1}`).toBeUndefined();
    }
    await attempt(guarded);
    expect(budget.stopped).toMatchObject({ cause: { key: "status:500" }, failures: 2 });
    // An invalid reply is named too, though it does not stop a run (the endpoint answered).
    expect(heard).toEqual(["connection:ECONNREFUSED", "invalid-output", "status:500"]);
  });
});
