/**
 * The Amazon Bedrock adapter: the {@link LLM} seam on the Converse API, with JSON asked for by a
 * JSON schema (structured output) or a forced tool, a prompt cache point where the prompt says it
 * repeats the previous request, and retries of throttling and outages on top of the SDK's own.
 */
import {
  BedrockRuntimeClient,
  type ContentBlock,
  ConverseCommand,
  type ConverseCommandInput,
  type ConverseCommandOutput,
  type Message,
  type SystemContentBlock,
  type ToolInputSchema,
} from "@aws-sdk/client-bedrock-runtime";
import { type Backoff, backoff, realSleep } from "../../../base/backoff/index.js";
import { httpStatusOf, isNetworkFailure, isTransient } from "../../../base/transient/index.js";
import type { Turn } from "../../windows/index.js";
import { InvalidModelOutputError, LLMError } from "../errors.js";
import { parseModelJSON } from "../parse.js";
import type { ChatJSONOptions, LLM, LLMUsage, PromptTurn, UsageListener } from "../types.js";
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

/**
 * How the adapter gets JSON when a schema is given:
 * - `json_schema`: Converse structured output (`outputConfig.textFormat`), the reply is text;
 * - `tool`: one tool whose input schema is the schema, forced by `toolChoice`; the reply is the
 *   tool call's input (for models without structured output that can be forced to a tool).
 */
export type BedrockOutputMode = "json_schema" | "tool";

export interface BedrockConverseLLMOptions {
  /**
   * The client to send with. Default: `new BedrockRuntimeClient({})`, region and credentials from
   * the environment and the SDK's standard retries (3 attempts), which run inside each attempt of
   * the adapter.
   */
  client?: BedrockRuntimeClient;
  /** The model id, inference profile id or ARN to converse with (required). */
  modelId: string;
  /** How JSON is asked for, given a schema ({@link BedrockOutputMode}). Default `"json_schema"`. */
  output?: BedrockOutputMode;
  /**
   * The schema's name (`json_schema`) or the tool's (`tool`) on the wire: 1 to 64 of
   * `A-Za-z0-9_-`. Default `"reply"`.
   */
  schemaName?: string;
  /** `inferenceConfig.maxTokens`, a positive integer. Default 4096. */
  maxTokens?: number;
  /** `inferenceConfig.temperature`, a finite number from 0 (models have a maximum). Default 0. */
  temperature?: number;
  /**
   * Milliseconds one attempt (one `client.send`, the SDK's retries included) may take before it
   * is abandoned as a retryable timeout; a positive integer. Default 120000.
   */
  timeoutMs?: number;
  /**
   * Milliseconds one call may take in all, its attempts, their backoff and the reading of the
   * reply included, before it fails (retryable, kind `timeout`): `timeoutMs` restarts with each
   * attempt, so a stalled endpoint would otherwise hold the call for `maxAttempts` of them. A
   * positive integer. Default 120000.
   */
  deadlineMs?: number;
  /**
   * Attempts of the adapter when throttled or on 5xx, timeouts and network errors; a positive
   * integer. Default 4.
   */
  maxAttempts?: number;
  /**
   * Backoff before retry n: a uniform wait of up to `baseDelayMs * 2^(n-1)` ms (default 500),
   * capped at `maxDelayMs` (default 20000); positive integers.
   */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** The jitter source, 0 to 1 (default `Math.random`). */
  random?: () => number;
  /** How backoff waits (default a timer); tests inject one that does not. */
  sleep?: (ms: number) => Promise<void>;
  /** Told of the tokens of every answered call, a reply that is not JSON included. */
  onUsage?: UsageListener;
}

const DEFAULT_MAX_ATTEMPTS = 4;
const DEFAULT_BASE_DELAY_MS = 500;
const DEFAULT_MAX_DELAY_MS = 20_000;

/**
 * An {@link LLM} on Bedrock's Converse API. System turns become `system` blocks, user and
 * assistant turns `messages` (other roles are refused); a positive `cachePrefix` on a user turn
 * (the last such turn) puts a `cachePoint` block after that many code units of its content. With
 * a schema, JSON is asked for per `output`; without one, the reply text is parsed as it is.
 *
 * Throttling, 5xx, timeouts and network errors are retried up to `maxAttempts` times with full
 * jitter backoff, and then reject with a retryable {@link LLMError}; other failures (validation,
 * credentials, access) reject with a non-retryable one at once. An abort of `signal` rejects
 * promptly, in flight or during a backoff, with a non-retryable LLMError whose `cause` is the
 * signal's reason. The whole call, attempts, backoff and the reply's reading included, ends at
 * `deadlineMs` with a retryable LLMError of kind `timeout` that names it. A reply that is not
 * JSON is an {@link InvalidModelOutputError}.
 */
export class BedrockConverseLLM implements LLM {
  readonly #client: BedrockRuntimeClient;
  readonly #modelId: string;
  readonly #output: BedrockOutputMode;
  readonly #schemaName: string;
  readonly #maxTokens: number;
  readonly #temperature: number;
  readonly #timeoutMs: number;
  readonly #deadlineMs: number;
  readonly #maxAttempts: number;
  readonly #pacing: Backoff;
  readonly #onUsage: UsageListener | undefined;

  /** Throws a RangeError naming an option that is missing or out of range. */
  constructor(options: BedrockConverseLLMOptions) {
    const modelId = nonEmptyString("modelId", options.modelId);
    const output = options.output ?? "json_schema";
    if (output !== "json_schema" && output !== "tool") {
      throw new RangeError(
        `output must be "json_schema" or "tool" (got ${JSON.stringify(output)})`,
      );
    }
    const schemaName = schemaNameOf(options.schemaName);
    const temperature = options.temperature ?? DEFAULT_TEMPERATURE;
    if (!(Number.isFinite(temperature) && temperature >= 0)) {
      throw new RangeError(`temperature must be a finite number from 0 (got ${temperature})`);
    }
    this.#timeoutMs = timerMs("timeoutMs", options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    this.#deadlineMs = timerMs("deadlineMs", options.deadlineMs ?? DEFAULT_DEADLINE_MS);
    this.#maxTokens = positiveInteger("maxTokens", options.maxTokens ?? DEFAULT_MAX_OUTPUT_TOKENS);
    this.#maxAttempts = positiveInteger("maxAttempts", options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);
    this.#pacing = {
      baseDelayMs: positiveInteger("baseDelayMs", options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS),
      maxDelayMs: positiveInteger("maxDelayMs", options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS),
      random: options.random ?? Math.random,
      sleep: options.sleep ?? realSleep,
    };
    this.#modelId = modelId;
    this.#output = output;
    this.#schemaName = schemaName;
    this.#temperature = temperature;
    this.#onUsage = options.onUsage;
    this.#client = options.client ?? new BedrockRuntimeClient({});
  }

  /**
   * The parsed JSON reply to `messages`. Rejects with an {@link LLMError} when Bedrock does not
   * answer (or `messages` holds a role Converse has no place for), an
   * {@link InvalidModelOutputError} when the answer is not JSON (usage is reported first).
   */
  async chatJSON(messages: readonly Turn[], options: ChatJSONOptions = {}): Promise<unknown> {
    const started = performance.now();
    const input = this.#input(messages, options.schema);
    const deadline = callDeadline(this.#deadlineMs, options.signal);
    let response: ConverseCommandOutput;
    try {
      response = await this.#send(input, deadline.signal, deadline.passed);
    } finally {
      deadline.dispose();
    }
    const call = { model: this.#modelId, latencyMs: performance.now() - started };
    const usage = usageOf(response);
    this.#onUsage?.(usage, call);
    options.onUsage?.(usage, call);
    return this.#reply(response, options.schema !== undefined);
  }

  #input(
    messages: readonly Turn[],
    schema: Record<string, unknown> | undefined,
  ): ConverseCommandInput {
    const system: SystemContentBlock[] = [];
    const conversation: Message[] = [];
    const cached = lastCachedUserTurn(messages);
    messages.forEach((turn, index) => {
      if (turn.role === "system") {
        system.push({ text: turn.content });
      } else if (turn.role === "user" || turn.role === "assistant") {
        const content =
          index === cached ? withCachePoint(turn as PromptTurn, index) : [{ text: turn.content }];
        conversation.push({ role: turn.role, content });
      } else {
        const got = JSON.stringify(turn.role);
        const roles = `"system", "user" or "assistant"`;
        throw new LLMError(
          `messages[${index}].role must be ${roles} for Converse (got ${got})`,
          false,
        );
      }
    });
    const input: ConverseCommandInput = {
      modelId: this.#modelId,
      messages: conversation,
      inferenceConfig: { maxTokens: this.#maxTokens, temperature: this.#temperature },
    };
    if (system.length > 0) input.system = system;
    if (schema === undefined) return input;
    if (this.#output === "tool") {
      input.toolConfig = {
        tools: [
          {
            toolSpec: {
              name: this.#schemaName,
              description: "Give the reply as this tool's input.",
              inputSchema: { json: schema } as ToolInputSchema,
            },
          },
        ],
        toolChoice: { tool: { name: this.#schemaName } },
      };
    } else {
      input.outputConfig = {
        textFormat: {
          type: "json_schema",
          structure: { jsonSchema: { name: this.#schemaName, schema: JSON.stringify(schema) } },
        },
      };
    }
    return input;
  }

  /**
   * One Converse call, retried per the class's rules, until `signal` aborts: the caller's abort,
   * or the call's deadline once `passed`.
   */
  async #send(
    input: ConverseCommandInput,
    signal: AbortSignal,
    passed: () => boolean,
  ): Promise<ConverseCommandOutput> {
    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) throw this.#aborted(signal, passed());
      const deadline = attemptSignal(signal, this.#timeoutMs);
      try {
        // The SDK is not trusted to give up at once when a reply is trickling.
        const sent = this.#client.send(new ConverseCommand(input), {
          abortSignal: deadline.signal,
        });
        return await rejectOnAbort(sent, signal);
      } catch (error) {
        if (signal.aborted) throw this.#aborted(signal, passed());
        const failure = this.#failure(error, deadline.timedOut(), attempt);
        if (!failure.retryable || attempt >= this.#maxAttempts) throw failure;
      } finally {
        deadline.dispose();
      }
      await untilAborted(backoff(this.#pacing, attempt), signal);
    }
  }

  /** The call's end by `signal`: past its deadline (retryable), or aborted by the caller. */
  #aborted(signal: AbortSignal, passed: boolean): LLMError {
    const prefix = `bedrock converse (${this.#modelId})`;
    if (passed) {
      return new LLMError(`${prefix}: ${deadlinePassed(this.#deadlineMs)}`, true, undefined, {
        cause: signal.reason,
        kind: "timeout",
      });
    }
    return new LLMError(`${prefix}: aborted`, false, undefined, {
      cause: signal.reason,
      kind: "aborted",
    });
  }

  #failure(error: unknown, timedOut: boolean, attempt: number): LLMError {
    const prefix = `bedrock converse (${this.#modelId})`;
    const tries = `attempt ${attempt} of maxAttempts ${this.#maxAttempts}`;
    if (timedOut) {
      const message = `${prefix}: timed out after timeoutMs ${this.#timeoutMs} (${tries})`;
      return new LLMError(message, true, undefined, { cause: error, kind: "timeout" });
    }
    const failure = error as { name?: string; message?: string };
    const status = httpStatusOf(error);
    if (status !== undefined && status >= 300 && status < 400) {
      // The SDK follows no redirect and does not retry one (see redirects.ts for OpenAI's): say
      // so, rather than its "UnknownError".
      const message = `${prefix}: the endpoint answered ${status}, a redirect, which is not followed: the request went nowhere else (point the endpoint at the Bedrock runtime that answers) (not retryable)`;
      return new LLMError(message, false, status, { cause: error });
    }
    const retryable = isTransient(error);
    const detail = `${failure.name ?? "Error"}: ${failure.message ?? String(error)}`;
    const message = `${prefix}: ${detail} (${retryable ? tries : `not retryable${authHint(status)}`})`;
    const kind = status === undefined && isNetworkFailure(error) ? "connection" : undefined;
    return new LLMError(message, retryable, status, { cause: error, kind });
  }

  /** The reply's JSON: the forced tool's input, or the parsed text. */
  #reply(response: ConverseCommandOutput, withSchema: boolean): unknown {
    const content = response.output?.message?.content ?? [];
    const text = content
      .flatMap((block) => (block.text === undefined ? [] : [block.text]))
      .join("");
    const truncated = response.stopReason === "max_tokens";
    if (withSchema && this.#output === "tool") {
      const call = content.find((block) => block.toolUse?.name === this.#schemaName)?.toolUse;
      if (call === undefined) {
        const reason = `the reply has no call of the "${this.#schemaName}" tool`;
        throw new InvalidModelOutputError(`${reason} (stopReason ${response.stopReason})`, text);
      }
      // A call cut short by the token limit has an incomplete input, however it parsed.
      if (truncated) {
        throw new InvalidModelOutputError(
          `the tool call stopped at maxTokens (${this.#maxTokens})`,
          JSON.stringify(call.input ?? null),
        );
      }
      return call.input;
    }
    return parseModelJSON(text, truncated ? `maxTokens (${this.#maxTokens})` : undefined);
  }
}

/** The index of the last user turn with a positive `cachePrefix`, or -1. */
function lastCachedUserTurn(messages: readonly Turn[]): number {
  return messages.findLastIndex(
    (turn) => turn.role === "user" && ((turn as PromptTurn).cachePrefix ?? 0) > 0,
  );
}

/**
 * The turn's content with a cache point after its first `cachePrefix` code units (at the end when
 * the prefix is all of it: Converse refuses empty text blocks). A split inside a surrogate pair
 * moves before it, so that neither block holds half a character.
 */
function withCachePoint(turn: PromptTurn, index: number): ContentBlock[] {
  const { content } = turn;
  const prefix = turn.cachePrefix ?? 0;
  if (!Number.isInteger(prefix)) {
    throw new LLMError(`messages[${index}].cachePrefix must be an integer (got ${prefix})`, false);
  }
  let at = Math.min(prefix, content.length);
  if (
    at < content.length &&
    isHighSurrogate(content.charCodeAt(at - 1)) &&
    isLowSurrogate(content.charCodeAt(at))
  ) {
    at -= 1;
  }
  if (at === 0) return [{ text: content }];
  const blocks: ContentBlock[] = [
    { text: content.slice(0, at) },
    { cachePoint: { type: "default" } },
  ];
  if (at < content.length) blocks.push({ text: content.slice(at) });
  return blocks;
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

function usageOf(response: ConverseCommandOutput): LLMUsage {
  const usage = response.usage;
  return {
    inputTokens: usage?.inputTokens ?? 0,
    outputTokens: usage?.outputTokens ?? 0,
    cacheReadTokens: usage?.cacheReadInputTokens ?? 0,
    cacheWriteTokens: usage?.cacheWriteInputTokens ?? 0,
  };
}

/**
 * The signal of one attempt: aborted with the caller's signal, or after `timeoutMs`. `dispose`
 * stops the timer and lets go of the caller's signal.
 */
function attemptSignal(
  caller: AbortSignal | undefined,
  timeoutMs: number,
): { signal: AbortSignal; timedOut: () => boolean; dispose: () => void } {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort(caller?.reason);
  caller?.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    dispose: () => {
      clearTimeout(timer);
      caller?.removeEventListener("abort", onAbort);
    },
  };
}

/**
 * `wait`, cut short when `signal` aborts; the caller checks the signal afterwards. The injected
 * sleep takes no signal, so an abort cannot cancel its timer, only stop waiting for it.
 */
function untilAborted(wait: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return wait;
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve();
    signal.addEventListener("abort", onAbort, { once: true });
    wait.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
