/**
 * The adapter for OpenAI and the providers that speak its chat completions API (DeepSeek, vLLM,
 * Ollama, …): the {@link LLM} seam on `client.chat.completions.create`, with JSON asked for by a
 * strict JSON schema or, where the provider has no schemas, by JSON mode and the schema in the
 * prompt. Retries are the SDK's, which honour `retry-after-ms` and `retry-after`.
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from "openai";
import { isTransient, isTransientStatus } from "../../../base/transient/index.js";
import type { Turn } from "../../windows/index.js";
import { InvalidModelOutputError, LLMError, type LLMFailureKind } from "../errors.js";
import { parseModelJSON } from "../parse.js";
import type { ChatJSONOptions, LLM, LLMUsage, UsageListener } from "../types.js";
import { callDeadline, deadlinePassed, rejectOnAbort, timerMs } from "./deadline.js";
import {
  authHint,
  DEFAULT_DEADLINE_MS,
  DEFAULT_MAX_OUTPUT_TOKENS,
  DEFAULT_TEMPERATURE,
  DEFAULT_TIMEOUT_MS,
  nonEmptyString,
  positiveInteger,
  schemaNameOf,
} from "./options.js";
import { redirectSafeFetch } from "./redirects.js";

/**
 * How the adapter asks for JSON:
 * - `json_schema`: when a schema is given (none otherwise), `response_format:
 *   {type: "json_schema", json_schema: {name, schema, strict: true}}`;
 * - `json_object`: `response_format: {type: "json_object"}` always, and the schema, when given, in
 *   a system message put before the caller's turns (for providers without schemas, e.g. DeepSeek).
 */
export type OpenAIResponseFormat = "json_schema" | "json_object";

export interface OpenAICompatibleLLMOptions {
  /**
   * The API's base URL, version path included. Default OpenAI's, `https://api.openai.com/v1`
   * (the SDK reads `OPENAI_BASE_URL` first). Not used with `client`.
   */
  baseURL?: string;
  /**
   * The API key, sent as a bearer token, or a function the SDK calls for it before each request
   * (a key read from a secret store and cached, read again once refused). Default
   * `OPENAI_API_KEY`; one of the two is required (a server that checks none takes any string).
   * Not used with `client`.
   */
  apiKey?: string | (() => Promise<string>);
  /** The model name (required). */
  model: string;
  /** How JSON is asked for (see {@link OpenAIResponseFormat}). Default `"json_schema"`. */
  responseFormat?: OpenAIResponseFormat;
  /** `json_schema.name` on the wire: 1 to 64 of `A-Za-z0-9_-`. Default `"reply"`. */
  schemaName?: string;
  /**
   * `max_tokens`, a positive integer: the reply's output-token limit, always sent, so that no
   * reply runs to the provider's own limit. Default 4096.
   */
  maxTokens?: number;
  /**
   * `temperature`, a finite number from 0; `null` sends none, for models that only take their
   * default (OpenAI's reasoning models). Default 0.
   */
  temperature?: number | null;
  /**
   * Retries by the SDK of 408, 409, 429, 5xx, timeouts and connection errors, waiting what
   * `retry-after-ms` or `retry-after` asks (up to a minute) or backing off from 0.5 s; an integer
   * from 0. Default 3. Applied per request, also with `client`.
   */
  maxRetries?: number;
  /**
   * Milliseconds one request may take before it times out (retryable); a positive integer.
   * Default 120000. Applied per request, also with `client`.
   */
  timeoutMs?: number;
  /**
   * Milliseconds one call may take in all, its retries and the reading of the reply included,
   * before it fails (retryable, kind `timeout`): the SDK's `timeoutMs` ends at the reply's
   * headers, so a reply that trickles would otherwise hold the call for ever. A positive integer.
   * Default 120000.
   */
  deadlineMs?: number;
  /** Told of the tokens of every answered call, a reply that is not JSON included. */
  onUsage?: UsageListener;
  /** The client to send with (default one made from `baseURL` and `apiKey`). */
  client?: OpenAI;
}

const DEFAULT_MAX_RETRIES = 3;

/**
 * An {@link LLM} on an OpenAI-compatible chat completions API. Turns go over as they are
 * (`system`, `user` and `assistant`; other roles are refused), in order: the API has no explicit
 * cache points, providers cache shared prompt prefixes by themselves, so `cachePrefix` is not
 * sent. The reply's text is parsed as JSON.
 *
 * Failures reject with an {@link LLMError}: retryable after the SDK's retries for 408, 409, 429,
 * 5xx, timeouts and connection errors, at once and not retryable for other statuses (400, 401,
 * 403, 404, …). An abort of `signal` rejects promptly, in flight or during a retry wait, with a
 * non-retryable LLMError whose `cause` is the signal's reason. A reply that is not JSON, or a
 * refusal, is an {@link InvalidModelOutputError}.
 */
export class OpenAICompatibleLLM implements LLM {
  readonly #client: OpenAI;
  readonly #model: string;
  readonly #responseFormat: OpenAIResponseFormat;
  readonly #schemaName: string;
  readonly #maxTokens: number;
  readonly #temperature: number | null;
  readonly #maxRetries: number;
  readonly #timeoutMs: number;
  readonly #deadlineMs: number;
  readonly #onUsage: UsageListener | undefined;

  /** Throws a RangeError naming an option that is missing or out of range. */
  constructor(options: OpenAICompatibleLLMOptions) {
    const model = nonEmptyString("model", options.model);
    const responseFormat = options.responseFormat ?? "json_schema";
    if (responseFormat !== "json_schema" && responseFormat !== "json_object") {
      const got = JSON.stringify(responseFormat);
      throw new RangeError(`responseFormat must be "json_schema" or "json_object" (got ${got})`);
    }
    const schemaName = schemaNameOf(options.schemaName);
    const maxTokens = positiveInteger("maxTokens", options.maxTokens ?? DEFAULT_MAX_OUTPUT_TOKENS);
    const temperature =
      options.temperature === undefined ? DEFAULT_TEMPERATURE : options.temperature;
    if (temperature !== null && !(Number.isFinite(temperature) && temperature >= 0)) {
      throw new RangeError(
        `temperature must be a finite number from 0 or null (got ${temperature})`,
      );
    }
    const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    if (!Number.isInteger(maxRetries) || maxRetries < 0) {
      throw new RangeError(`maxRetries must be an integer from 0 (got ${maxRetries})`);
    }
    const timeoutMs = positiveInteger("timeoutMs", options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const deadlineMs = timerMs("deadlineMs", options.deadlineMs ?? DEFAULT_DEADLINE_MS);
    if (options.client === undefined && !options.apiKey && !process.env.OPENAI_API_KEY) {
      throw new RangeError("apiKey must be given when OPENAI_API_KEY is not set");
    }
    this.#model = model;
    this.#responseFormat = responseFormat;
    this.#schemaName = schemaName;
    this.#maxTokens = maxTokens;
    this.#temperature = temperature;
    this.#maxRetries = maxRetries;
    this.#timeoutMs = timeoutMs;
    this.#deadlineMs = deadlineMs;
    this.#onUsage = options.onUsage;
    this.#client =
      options.client ??
      new OpenAI({
        baseURL: options.baseURL,
        apiKey: options.apiKey,
        maxRetries,
        timeout: timeoutMs,
        fetch: redirectSafeFetch(),
      });
  }

  /**
   * The parsed JSON reply to `messages`. Rejects with an {@link LLMError} when the provider does
   * not answer (or `messages` holds a role the API has no place for), an
   * {@link InvalidModelOutputError} when the answer is not JSON (usage is reported first).
   */
  async chatJSON(messages: readonly Turn[], options: ChatJSONOptions = {}): Promise<unknown> {
    const started = performance.now();
    const body = this.#body(messages, options.schema);
    const deadline = callDeadline(this.#deadlineMs, options.signal);
    let completion: OpenAI.ChatCompletion;
    try {
      const request = this.#client.chat.completions.create(body, {
        signal: deadline.signal,
        timeout: this.#timeoutMs,
        maxRetries: this.#maxRetries,
      });
      completion = await rejectOnAbort(request, deadline.signal);
    } catch (error) {
      throw this.#failure(error, options.signal, deadline.passed());
    } finally {
      deadline.dispose();
    }
    const call = { model: this.#model, latencyMs: performance.now() - started };
    const usage = usageOf(completion);
    this.#onUsage?.(usage, call);
    options.onUsage?.(usage, call);
    return this.#reply(completion);
  }

  #body(
    messages: readonly Turn[],
    schema: Record<string, unknown> | undefined,
  ): OpenAI.ChatCompletionCreateParamsNonStreaming {
    const wire = messages.map((turn, index): OpenAI.ChatCompletionMessageParam => {
      if (turn.role === "system" || turn.role === "user" || turn.role === "assistant") {
        return { role: turn.role, content: turn.content };
      }
      const got = JSON.stringify(turn.role);
      const roles = `"system", "user" or "assistant"`;
      throw new LLMError(`messages[${index}].role must be ${roles} (got ${got})`, false);
    });
    const body: OpenAI.ChatCompletionCreateParamsNonStreaming = {
      model: this.#model,
      messages: wire,
    };
    if (this.#temperature !== null) body.temperature = this.#temperature;
    body.max_tokens = this.#maxTokens;
    if (this.#responseFormat === "json_object") {
      body.response_format = { type: "json_object" };
      // First, so that it is part of the prefix every request of the caller shares.
      if (schema !== undefined) {
        wire.unshift({ role: "system", content: schemaInstruction(schema) });
      }
    } else if (schema !== undefined) {
      body.response_format = {
        type: "json_schema",
        json_schema: { name: this.#schemaName, schema, strict: true },
      };
    }
    return body;
  }

  #failure(error: unknown, signal: AbortSignal | undefined, passed: boolean): LLMError {
    const where = `chat completions (${this.#model} at ${this.#client.baseURL})`;
    const cause = signal?.aborted ? signal.reason : error;
    const fail = (what: string, retryable: boolean, status?: number, kind?: LLMFailureKind) =>
      new LLMError(`${where}: ${what}`, retryable, status, { cause, kind });
    const retries = `maxRetries ${this.#maxRetries}`;
    if (signal?.aborted) return fail("aborted", false, undefined, "aborted");
    if (passed) return fail(deadlinePassed(this.#deadlineMs), true, undefined, "timeout");
    if (error instanceof APIConnectionTimeoutError) {
      const what = `timed out after timeoutMs ${this.#timeoutMs} (${retries})`;
      return fail(what, true, undefined, "timeout");
    }
    if (error instanceof APIConnectionError) {
      // The SDK says only "Connection error."; the system error beneath says which.
      const code = systemErrorCode(error);
      const what = `connection failed: ${code ?? error.message} (${retries})`;
      return fail(what, true, undefined, "connection");
    }
    if (error instanceof APIError && error.status !== undefined) {
      const retryable = isTransientStatus(error.status);
      return fail(
        `${error.message} (${retryable ? retries : `not retryable${authHint(error.status)}`})`,
        retryable,
        error.status,
      );
    }
    return fail(error instanceof Error ? error.message : String(error), isTransient(error));
  }

  /** The JSON of the first choice's text. */
  #reply(completion: OpenAI.ChatCompletion): unknown {
    const choice = completion.choices[0];
    if (choice === undefined) throw new InvalidModelOutputError("the reply has no choices", "");
    const { content, refusal } = choice.message;
    if (refusal) throw new InvalidModelOutputError(`the model refused: ${refusal}`, refusal);
    const limit = `the token limit (maxTokens ${this.#maxTokens})`;
    return parseModelJSON(content ?? "", choice.finish_reason === "length" ? limit : undefined);
  }
}

/** The code of the system error (`ECONNREFUSED`, `ENOTFOUND`, …) somewhere in `error`'s causes. */
function systemErrorCode(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  for (let e = error as { code?: unknown; cause?: unknown } | undefined; e; ) {
    if (seen.has(e)) return undefined;
    seen.add(e);
    if (typeof e.code === "string" && /^E[A-Z_]+$/.test(e.code)) return e.code;
    e = e.cause as typeof e;
  }
  return undefined;
}

/** The system message that states the schema in `json_object` mode. */
function schemaInstruction(schema: Record<string, unknown>): string {
  return `Reply with one JSON value that follows this JSON schema:\n${JSON.stringify(schema)}`;
}

function usageOf(completion: OpenAI.ChatCompletion): LLMUsage {
  const usage = completion.usage;
  const details = usage?.prompt_tokens_details;
  // DeepSeek reports its cache hits next to the counts rather than in prompt_tokens_details.
  const hits = (usage as { prompt_cache_hit_tokens?: number } | undefined)?.prompt_cache_hit_tokens;
  return {
    inputTokens: usage?.prompt_tokens ?? 0,
    outputTokens: usage?.completion_tokens ?? 0,
    cacheReadTokens: details?.cached_tokens ?? hits ?? 0,
    cacheWriteTokens: details?.cache_write_tokens ?? 0,
  };
}
