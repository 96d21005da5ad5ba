import { formatDuration, parseDuration } from "../../base/duration/index.js";
import { DAY_MS, MAX_RETENTION_DAYS } from "../../base/dynamodb/index.js";
import { KnowledgeConfigError } from "../errors.js";
import type { AnalyzerOptions, Route } from "../extraction/index.js";
import { DEFAULT_DEADLINE_MS } from "../extraction/llm/index.js";
import { overlapProblem } from "../windows/index.js";

/** The model services the extraction function can call; `offline` needs none (local runs). */

/** The default channel budget is the deployment's divided by this. */
const CHANNEL_SHARE_OF_BUDGET = 4;
export type ExtractorKind = "bedrock" | "openai" | "offline";
export const EXTRACTORS: readonly ExtractorKind[] = ["bedrock", "openai", "offline"];
export const ROUTES: readonly Route[] = ["sliding", "prefix", "non_prefix", "full", "full2"];

/** The Bedrock model when none is set: Amazon Nova Lite, on-demand (deployed and local). */
export const DEFAULT_BEDROCK_MODEL_ID = "amazon.nova-lite-v1:0";

/** Where an OpenAI-compatible endpoint's API key is kept: never in the environment itself. */
export type ApiKeySource = { kind: "secret"; id: string } | { kind: "parameter"; name: string };

/**
 * A channel's daily token budget when none is set: a quarter of the deployment's, so that one
 * channel (a stranger's chat, a flood) can spend at most that and never pause every other.
 */
function defaultChannelBudget(daily: number): number {
  return Math.max(MIN_TOKEN_BUDGET, Math.floor(daily / CHANNEL_SHARE_OF_BUDGET));
}

/** `text` as a whole number from `min` to `max`, else a problem of `name` said to `fail`. */
function wholeNumber(
  name: ExtractVariable,
  text: string,
  min: number,
  max: number,
  fail: (setting: ExtractVariable, problem: string) => void,
): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max) {
    fail(name, `must be an integer from ${min} to ${max} (got ${JSON.stringify(text)})`);
  }
  return n;
}

/**
 * DAILY_TOKEN_BUDGET and CHANNEL_TOKEN_BUDGET as extraction reads them (each from 1,000 to a
 * trillion; the channel's, unset: {@link defaultChannelBudget}), pushing a problem per variable at
 * fault to `fail`: extraction's and the other spenders of its budget (the ask summaries) alike.
 */
function tokenBudgets(
  env: Record<string, string | undefined>,
  fail: (setting: ExtractVariable, problem: string) => void,
): { daily: number; perChannel: number } {
  const read = (name: ExtractVariable, text: string) =>
    wholeNumber(name, text, MIN_TOKEN_BUDGET, MAX_TOKEN_BUDGET, fail);
  const daily = read(
    "DAILY_TOKEN_BUDGET",
    env.DAILY_TOKEN_BUDGET || EXTRACT_DEFAULTS.DAILY_TOKEN_BUDGET,
  );
  const channel = env.CHANNEL_TOKEN_BUDGET;
  return {
    daily,
    perChannel: channel ? read("CHANNEL_TOKEN_BUDGET", channel) : defaultChannelBudget(daily),
  };
}

/** The daily token budgets alone, for a function that spends extraction's (the ask summaries). */
export function readTokenBudgets(env: Record<string, string | undefined>): {
  daily: number;
  perChannel: number;
} {
  const problems: { setting: string; problem: string }[] = [];
  const budgets = tokenBudgets(env, (setting, problem) => problems.push({ setting, problem }));
  if (problems.length > 0) throw new KnowledgeConfigError(problems);
  return budgets;
}

/** Everything the extraction function is configured with, read from its environment. */
export interface ExtractFunctionConfig {
  resultsTable: string;
  /** The table reference-form segments name; the function may read only this one. */
  messagesTable: string;
  extractor: ExtractorKind;
  /** The Bedrock model id or OpenAI-compatible model name (the offline extractor's name). */
  modelId: string;
  /** The OpenAI-compatible base URL (`openai` only). */
  baseURL?: string;
  apiKey?: ApiKeySource;
  /** Bedrock's way to ask for JSON: an output schema, or a forced tool for older models. */
  bedrockOutput: "json_schema" | "tool";
  analyzer: Required<
    Pick<
      AnalyzerOptions,
      "route" | "windowSize" | "overlap" | "prefixStep" | "maxWindows" | "maxConcurrency"
    >
  >;
  /** The output-token limit of every model call (default 4096). */
  maxOutputTokens?: number;
  /** Characters of one message's text a prompt shows (default 4000); longer ones are cut. */
  maxTurnChars?: number;
  /**
   * The longest one model call may take in all, its retries and the reply's reading included
   * (both adapters' `deadlineMs`; default theirs, 120 s).
   */
  llmDeadlineMs?: number;
  /**
   * The circuit breaker: provider failures in a row that open it, and how long it stays open
   * (default `CircuitBreaker`'s, which are {@link EXTRACT_DEFAULTS}').
   */
  breaker?: { failures: number; cooldownMs: number };
  /** How long an extraction may hold its segment's lease: the function timeout. */
  leaseMs: number;
  /** How long a window's stored reply is kept for retries (past the queue's retention). */
  windowOutputTtlMs: number;
  /**
   * How long results and topic entries are kept after their segment's first message, and window
   * replies at most (`RESULT_RETENTION_DAYS`; default: results are kept until deleted).
   */
  resultRetentionMs?: number;
  /** Input and output tokens all channels may spend per UTC day (default: no budget). */
  dailyTokenBudget?: number;
  /**
   * Input and output tokens one channel may spend per UTC day (default: a quarter of
   * `dailyTokenBudget`, none without one).
   */
  channelTokenBudget?: number;
  /** Failed attempts before the consumer dead-letters a segment (default `DEFAULT_RETRY`'s). */
  maxAttempts?: number;
  /** Where the consumer moves a segment it gave up on (default: none, the queue's redrive). */
  deadLetterQueueUrl?: string;
  /**
   * The segment queue, where a redaction of the consumer's own (a change during an extraction)
   * sends a segment back past `reextractChangedShare` (default: none, never).
   */
  segmentQueueUrl?: string;
  /** The changed share of a segment's messages past which it is re-extracted (0 to 1). */
  reextractChangedShare: number;
  /**
   * Show system messages (`kind: system`: joins, parts, topic changes) to the extractor too
   * (`SHOW_SYSTEM_MESSAGES`; default false: stored and segmented, never shown).
   */
  showSystemMessages?: boolean;
}

/**
 * The defaults, in the form the environment carries them (also what the CDK stack sets). The
 * chat route is `sliding` 60/6: on the annotated IRC corpus it keeps 96% of reply links inside
 * one window for 20 calls and 40 input tokens per 1,000 messages and per message, where 20/2
 * keeps 87%, and `prefix` costs six times the tokens (docs/benchmarks.md, bench:extraction).
 */
export const EXTRACT_DEFAULTS = {
  ROUTE: "sliding",
  WINDOW_SIZE: "60",
  OVERLAP: "6",
  PREFIX_STEP: "5",
  MAX_WINDOWS: "8",
  LLM_CONCURRENCY: "4",
  // A forced tool works on every Converse model with tool use; a JSON schema only on some.
  BEDROCK_OUTPUT: "tool",
  LEASE: "15m",
  WINDOW_OUTPUT_TTL: "15d",
  // Ten million tokens a day: over twice what 100,000 messages a day take on the default route
  // (docs/extraction.md, "What it costs").
  DAILY_TOKEN_BUDGET: "10000000",
  MAX_ATTEMPTS: "16",
  MAX_OUTPUT_TOKENS: "4096",
  MAX_TURN_CHARS: "4000",
  // The adapters' own default, 2m: the deployment sizes the extraction timeout from it.
  LLM_DEADLINE: formatDuration(DEFAULT_DEADLINE_MS),
  // The circuit breaker: five failures in a row keep calls off a dead endpoint for 5 minutes.
  BREAKER_FAILURES: "5",
  BREAKER_COOLDOWN: "5m",
  // A segment a quarter of whose messages changed says something else: extract it again.
  REEXTRACT_CHANGED_SHARE: "0.25",
  // Joins, parts and topic changes say little of what a conversation is about, and cost tokens.
  SHOW_SYSTEM_MESSAGES: "false",
} as const;

/** The analysis defaults as the function reads them from {@link EXTRACT_DEFAULTS}. */
export const ANALYZER_DEFAULTS: Readonly<ExtractFunctionConfig["analyzer"]> = Object.freeze({
  route: EXTRACT_DEFAULTS.ROUTE,
  windowSize: Number(EXTRACT_DEFAULTS.WINDOW_SIZE),
  overlap: Number(EXTRACT_DEFAULTS.OVERLAP),
  prefixStep: Number(EXTRACT_DEFAULTS.PREFIX_STEP),
  maxWindows: Number(EXTRACT_DEFAULTS.MAX_WINDOWS),
  maxConcurrency: Number(EXTRACT_DEFAULTS.LLM_CONCURRENCY),
});

export type ExtractVariable =
  | keyof typeof EXTRACT_DEFAULTS
  | "RESULTS_TABLE"
  | "MESSAGES_TABLE"
  | "EXTRACTOR"
  | "MODEL_ID"
  | OptionalExtractVariable;

/** The variables the function does without when they are not set. */
export type OptionalExtractVariable =
  | "OPENAI_BASE_URL"
  | "OPENAI_API_KEY_SECRET"
  | "OPENAI_API_KEY_PARAMETER"
  | "CHANNEL_TOKEN_BUDGET"
  | "DEAD_LETTER_QUEUE_URL"
  | "SEGMENT_QUEUE_URL"
  | "RESULT_RETENTION_DAYS";

/** A token budget: at least one call's worth, at most a trillion a day. */
const MIN_TOKEN_BUDGET = 1000;
const MAX_TOKEN_BUDGET = 1_000_000_000_000;
/** The consumer's attempts: SQS's maxReceiveCount (at most 1000) must stay above them. */
const MAX_ATTEMPTS = 100;
const MAX_LLM_CONCURRENCY = 32;
/**
 * The ranges of the bounds' settings: an output-token limit with room for a bounded candidate or
 * two, up to a model's largest replies; a turn shown at least as a long chat line, at most as
 * much as a 400 KB message holds.
 */
export const EXTRACT_BOUNDS = {
  outputTokens: { min: 256, max: 65_536 },
  turnChars: { min: 200, max: 400_000 },
  /** The turns of a window (and its overlap and prefix step): `run --window-size` holds to it. */
  windowTurns: { min: 1, max: 1000 },
  /** A model call's deadline: a second at least, at most Lambda's longest timeout. */
  llmDeadlineMs: { min: 1000, max: 15 * 60_000 },
  /** The breaker: opened by 1 to 100 failures in a row, for 10 seconds to an hour. */
  breakerFailures: { min: 1, max: 100 },
  breakerCooldownMs: { min: 10_000, max: 3_600_000 },
} as const;
const { outputTokens, turnChars, llmDeadlineMs, breakerFailures, breakerCooldownMs } =
  EXTRACT_BOUNDS;
const MAX_WINDOW_TURNS = EXTRACT_BOUNDS.windowTurns.max;

/**
 * Reads and validates the configuration at cold start (and, through the same function, at synth),
 * so that bad settings fail with every variable at fault named instead of misbehaving later.
 */
export function readExtractConfig(env: Record<string, string | undefined>): ExtractFunctionConfig {
  const problems: { setting: string; problem: string }[] = [];
  const fail = (setting: ExtractVariable, problem: string) => {
    problems.push({ setting, problem });
    return undefined;
  };
  const value = (name: ExtractVariable): string | undefined =>
    env[name] || (EXTRACT_DEFAULTS as Record<string, string>)[name];
  // A blank name (" ") is no table: refused at cold start, not at the first write.
  const required = (name: ExtractVariable): string =>
    (value(name)?.trim() ? value(name) : undefined) ??
    fail(name, "must be set (environment variable), not blank") ??
    "";
  const integer = (name: ExtractVariable, min: number, max: number): number =>
    wholeNumber(name, value(name) ?? "", min, max, fail);
  const duration = (name: keyof typeof EXTRACT_DEFAULTS, min: number, max?: number): number => {
    try {
      const ms = parseDuration(value(name) ?? "", name);
      if (ms < min) fail(name, `must be at least ${min} ms (got ${ms})`);
      if (max !== undefined && ms > max) fail(name, `must be at most ${max} ms (got ${ms})`);
      return ms;
    } catch (error) {
      fail(name, (error as Error).message.replace(`${name} `, ""));
      return 0;
    }
  };
  const share = (name: ExtractVariable): number => {
    const text = value(name) ?? "";
    const n = Number(text);
    if (!/^\d+(\.\d+)?$/.test(text) || n > 1) {
      fail(
        name,
        `must be a number from 0 (on every change) to 1 (never) (got ${JSON.stringify(text)})`,
      );
    }
    return n;
  };
  const oneOf = <T extends string>(name: ExtractVariable, options: readonly T[]): T => {
    const text = required(name);
    if (text !== "" && !options.includes(text as T)) {
      fail(name, `must be one of ${options.join(", ")} (got ${JSON.stringify(text)})`);
    }
    return text as T;
  };

  const extractor = oneOf("EXTRACTOR", EXTRACTORS);
  const budgets = tokenBudgets(env, fail);
  const config: ExtractFunctionConfig = {
    resultsTable: required("RESULTS_TABLE"),
    messagesTable: required("MESSAGES_TABLE"),
    extractor,
    modelId: extractor === "offline" ? (value("MODEL_ID") ?? "offline") : required("MODEL_ID"),
    bedrockOutput: oneOf("BEDROCK_OUTPUT", ["json_schema", "tool"] as const),
    analyzer: {
      route: oneOf("ROUTE", ROUTES),
      windowSize: integer("WINDOW_SIZE", 1, MAX_WINDOW_TURNS),
      overlap: integer("OVERLAP", 0, MAX_WINDOW_TURNS - 1),
      prefixStep: integer("PREFIX_STEP", 1, MAX_WINDOW_TURNS),
      maxWindows: integer("MAX_WINDOWS", 1, 1000),
      maxConcurrency: integer("LLM_CONCURRENCY", 1, MAX_LLM_CONCURRENCY),
    },
    maxOutputTokens: integer("MAX_OUTPUT_TOKENS", outputTokens.min, outputTokens.max),
    maxTurnChars: integer("MAX_TURN_CHARS", turnChars.min, turnChars.max),
    leaseMs: duration("LEASE", 1000),
    llmDeadlineMs: duration("LLM_DEADLINE", llmDeadlineMs.min, llmDeadlineMs.max),
    breaker: {
      failures: integer("BREAKER_FAILURES", breakerFailures.min, breakerFailures.max),
      cooldownMs: duration("BREAKER_COOLDOWN", breakerCooldownMs.min, breakerCooldownMs.max),
    },
    windowOutputTtlMs: duration("WINDOW_OUTPUT_TTL", DAY_MS),
    dailyTokenBudget: budgets.daily,
    channelTokenBudget: budgets.perChannel,
    maxAttempts: integer("MAX_ATTEMPTS", 1, MAX_ATTEMPTS),
    reextractChangedShare: share("REEXTRACT_CHANGED_SHARE"),
    showSystemMessages: oneOf("SHOW_SYSTEM_MESSAGES", ["true", "false"] as const) === "true",
  };
  if (env.RESULT_RETENTION_DAYS) {
    config.resultRetentionMs = integer("RESULT_RETENTION_DAYS", 1, MAX_RETENTION_DAYS) * DAY_MS;
  }
  // Any non-blank text: at synth it is a CloudFormation reference, at cold start the URL.
  const queueUrl = (name: "DEAD_LETTER_QUEUE_URL" | "SEGMENT_QUEUE_URL") => {
    const url = env[name];
    if (!url) return undefined;
    if (!/^\S+$/.test(url)) fail(name, `must be a queue URL (got ${JSON.stringify(url)})`);
    return url;
  };
  const deadLetterQueueUrl = queueUrl("DEAD_LETTER_QUEUE_URL");
  if (deadLetterQueueUrl !== undefined) config.deadLetterQueueUrl = deadLetterQueueUrl;
  const segmentQueueUrl = queueUrl("SEGMENT_QUEUE_URL");
  if (segmentQueueUrl !== undefined) config.segmentQueueUrl = segmentQueueUrl;
  // The lease is the function's timeout: a call that may outlast it would end in a timeout.
  if (config.llmDeadlineMs !== undefined && config.llmDeadlineMs >= config.leaseMs) {
    fail(
      "LLM_DEADLINE",
      `must be less than LEASE (${config.leaseMs} ms), the function's timeout (got ${config.llmDeadlineMs})`,
    );
  }
  const { windowSize, overlap } = config.analyzer;
  const overlapAtFault =
    Number.isInteger(windowSize) && Number.isInteger(overlap)
      ? overlapProblem(windowSize, overlap, "WINDOW_SIZE")
      : undefined;
  if (overlapAtFault !== undefined) fail("OVERLAP", overlapAtFault);
  if (extractor === "openai") {
    const baseURL = required("OPENAI_BASE_URL");
    if (baseURL !== "" && !/^https?:\/\/[^\s/]+/.test(baseURL)) {
      fail("OPENAI_BASE_URL", `must be an http(s) URL (got ${JSON.stringify(baseURL)})`);
    }
    config.baseURL = baseURL;
    const secret = env.OPENAI_API_KEY_SECRET;
    const parameter = env.OPENAI_API_KEY_PARAMETER;
    if (secret && parameter) {
      fail("OPENAI_API_KEY_SECRET", "and OPENAI_API_KEY_PARAMETER: set only one");
    } else if (secret) {
      config.apiKey = { kind: "secret", id: secret };
    } else if (parameter) {
      config.apiKey = { kind: "parameter", name: parameter };
    } else {
      fail(
        "OPENAI_API_KEY_SECRET",
        "or OPENAI_API_KEY_PARAMETER must name where the API key is kept (a Secrets Manager secret or an SSM SecureString parameter)",
      );
    }
  }
  if (problems.length > 0) throw new KnowledgeConfigError(problems);
  return config;
}
