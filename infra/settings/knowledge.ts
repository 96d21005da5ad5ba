/**
 * The knowledge wing's settings: the extraction function's model service and model, how a
 * segment is cut into windows, the model calls' limits, the token budgets, retries and circuit
 * breaker, re-extraction, and the spend alarms and cost estimate. Their defaults are the
 * function's own (`EXTRACT_DEFAULTS`), and each becomes the variable `readExtractConfig` reads it
 * from; synth reads that environment with `readExtractConfig` too (config.ts).
 */

import { type Route, windowCount } from "convoseg/extraction";
import {
  DEFAULT_BEDROCK_MODEL_ID,
  EXTRACT_BOUNDS,
  EXTRACT_DEFAULTS,
  ROUTES,
} from "convoseg/knowledge/config";
import { overlapProblem } from "convoseg/windows";
import {
  EVENT_SOURCE_CONCURRENCY,
  fail,
  got,
  LAMBDA_MAX_TIMEOUT_MS,
  SECRET_ARN,
  type Table,
} from "./kinds.js";

/** The model services the deployed extraction function may call. */
export type ExtractorSetting = "bedrock" | "openai";

/** The extraction function's time besides model calls: reads, lease, results, a cold start. */
const EXTRACT_MARGIN_MS = 30_000;
/** Amazon Nova Lite's published on-demand prices in us-east-1, USD per million tokens. */
const NOVA_LITE_PRICES = { input: 0.06, output: 0.24 };
/** Well above any model's list price: a larger number is a price per thousand taken for a million. */
const MAX_TOKEN_PRICE = 1000;
/** `readExtractConfig`'s bounds, so that the settings name them first (the cross-check agrees). */
const MAX_WINDOW_TURNS = EXTRACT_BOUNDS.windowTurns.max;
const MAX_WINDOWS = 1000;
const MAX_LLM_CONCURRENCY = 32;
const MIN_TOKEN_BUDGET = 1000;
const MAX_TOKEN_BUDGET = 1_000_000_000_000;
const MAX_EXTRACT_ATTEMPTS = 100;
/**
 * A Bedrock model id or inference profile id (`provider.model-version:n`, `us.provider.…`): it
 * goes into the IAM resource ARN, so no wildcard, slash or ARN passes.
 */
export const BEDROCK_MODEL_ID = /^[a-z0-9][a-z0-9-]*\.[A-Za-z0-9][A-Za-z0-9._:-]{0,200}$/;
/** An OpenAI-compatible model name: printable, no spaces. */
const OPENAI_MODEL = /^[\x21-\x7e]{1,256}$/;
/** The key travels with every request: HTTPS only. */
const HTTPS_URL = /^https:\/\/[^\s/]+[^\s]*$/;
/** An SSM parameter name (not an ARN); hierarchical names start with `/`. */
const PARAMETER_NAME = /^(?!\/?(aws|ssm))(?:[A-Za-z0-9_.-]+|(?:\/[A-Za-z0-9_.-]+)+)$/i;
const MAX_PARAMETER_NAME = 1011;

/**
 * With `openai`, its endpoint and exactly one place for the key; without, none of them. Run once
 * the three are read: a problem names the setting at fault, the first in this order.
 */
function openaiEndpoint(values: {
  extractor: ExtractorSetting;
  openaiBaseUrl: string | undefined;
  openaiApiKeySecret: string | undefined;
  openaiApiKeyParameter: string | undefined;
}): void {
  const { openaiBaseUrl, openaiApiKeySecret: secret, openaiApiKeyParameter: parameter } = values;
  if (values.extractor === "openai") {
    if (openaiBaseUrl === undefined) {
      fail("must be set when extractor is openai", "openaiBaseUrl");
    }
    if (secret !== undefined && parameter !== undefined) {
      fail("and openaiApiKeyParameter are both set: set only one", "openaiApiKeySecret");
    }
    if (secret === undefined && parameter === undefined) {
      fail(
        "or openaiApiKeyParameter must name where the API key is kept when extractor is openai (never the key itself)",
        "openaiApiKeySecret",
      );
    }
    return;
  }
  const given = { openaiBaseUrl, openaiApiKeySecret: secret, openaiApiKeyParameter: parameter };
  for (const [name, value] of Object.entries(given)) {
    if (value !== undefined) fail("applies only when extractor is openai", name);
  }
}

// What follows from the settings: the extraction function's timeout, the model's resources.

/**
 * System-defined cross-region inference profiles prefix the model id with their geography
 * (`us.amazon.nova-lite-v1:0`); model ids themselves start with the provider (`amazon.`).
 */
const INFERENCE_PROFILE_PREFIX = /^(us|us-gov|eu|apac|jp|au|ca|global)\./;
/** Calls a window may take: the first, and one repair of an invalid reply. */
const CALLS_PER_WINDOW = 2;

/** What sizes an extraction: the largest segment and how the route cuts it. */
export interface ExtractSizing {
  maxSize: number;
  route: Route;
  windowSize: number;
  overlap: number;
  prefixStep: number;
  maxWindows: number;
  llmConcurrency: number;
  /** The longest one model call may take, its retries included. */
  llmDeadlineMs: number;
}

/**
 * Rounds of model calls one after another for the largest segment: its windows `llmConcurrency`
 * at a time. The `prefix` route runs its first window alone (the others share its prompt as a
 * cached prefix), and `full2`'s second pass needs the first's answer.
 */
export function extractRounds(sizing: ExtractSizing): number {
  // The largest segment: one turn per message.
  const windows = windowCount(sizing.route, { ...sizing, turns: sizing.maxSize });
  switch (sizing.route) {
    case "prefix":
      return windows > 1 ? 1 + Math.ceil((windows - 1) / sizing.llmConcurrency) : 1;
    case "full2":
      return 2;
    default:
      return Math.ceil(windows / sizing.llmConcurrency);
  }
}

/**
 * The extraction function's timeout: every round of the largest segment at its worst, each call
 * running into its deadline (`llmDeadlineMs`, its retries included) and then a repair call that
 * does too, plus a margin for the reads and writes around them; at most Lambda's 15 minutes.
 * A segment that needs longer is not lost: each accepted window reply is stored as it comes, so
 * the retry after a timeout asks only for the rest (`WindowsReused`).
 */
export function extractTimeoutMs(sizing: ExtractSizing): number {
  return Math.min(
    LAMBDA_MAX_TIMEOUT_MS,
    extractRounds(sizing) * CALLS_PER_WINDOW * sizing.llmDeadlineMs + EXTRACT_MARGIN_MS,
  );
}

/** The Bedrock resources a model id is invoked through (see `Extraction`'s grant). */
export function bedrockModel(
  modelId: string,
): { kind: "model"; modelId: string } | { kind: "profile"; profileId: string; modelId: string } {
  return INFERENCE_PROFILE_PREFIX.test(modelId)
    ? {
        kind: "profile",
        profileId: modelId,
        modelId: modelId.replace(INFERENCE_PROFILE_PREFIX, ""),
      }
    : { kind: "model", modelId };
}

export const knowledge = <V, P>(table: Table<V, P>) =>
  table
    /** The extraction function's model service: `bedrock`, or an OpenAI-compatible `openai`. */
    .choice("extractor", {
      options: ["bedrock", "openai"],
      default: "bedrock",
      env: { extract: "EXTRACTOR" },
    })
    /**
     * The Bedrock model id, or a cross-region inference profile id (`us.amazon.nova-lite-v1:0`);
     * with `openai`, the endpoint's model name (required then).
     */
    .text("modelId", {
      rule: ({ extractor }) =>
        extractor === "openai"
          ? { pattern: OPENAI_MODEL, rule: "the endpoint's model name (no spaces)" }
          : {
              pattern: BEDROCK_MODEL_ID,
              rule: "a Bedrock model id or inference profile id such as amazon.nova-lite-v1:0 (no wildcard or ARN)",
            },
      default: DEFAULT_BEDROCK_MODEL_ID,
      // An OpenAI-compatible endpoint has no default model.
      fallback: ({ extractor }) =>
        extractor === "openai"
          ? fail("must be set when extractor is openai")
          : DEFAULT_BEDROCK_MODEL_ID,
      env: { extract: "MODEL_ID" },
    })
    /**
     * How a segment is cut into windows for the model. This and the window settings below
     * default to the function's own defaults (`EXTRACT_DEFAULTS`: ROUTE, WINDOW_SIZE, …).
     */
    .choice("route", {
      options: ROUTES,
      default: EXTRACT_DEFAULTS.ROUTE,
      env: { extract: "ROUTE" },
    })
    /** The `sliding` route's window, in turns, 1 to 1000. */
    .integer("windowSize", {
      default: EXTRACT_DEFAULTS.WINDOW_SIZE,
      min: 1,
      max: MAX_WINDOW_TURNS,
      env: { extract: "WINDOW_SIZE" },
    })
    /** Turns the `sliding` route's windows share, less than windowSize. */
    .integer("overlap", {
      default: EXTRACT_DEFAULTS.OVERLAP,
      min: 0,
      max: MAX_WINDOW_TURNS - 1,
      env: { extract: "OVERLAP" },
      check: (v) => {
        const problem = overlapProblem(v.windowSize, v.overlap);
        if (problem !== undefined) fail(problem);
      },
    })
    /** The `prefix` and `non_prefix` routes' step, in user turns, 1 to 1000. */
    .integer("prefixStep", {
      default: EXTRACT_DEFAULTS.PREFIX_STEP,
      min: 1,
      max: MAX_WINDOW_TURNS,
      env: { extract: "PREFIX_STEP" },
    })
    /** Windows kept per segment on the `prefix` and `non_prefix` routes (the last ones), 1 to 1000. */
    .integer("maxWindows", {
      default: EXTRACT_DEFAULTS.MAX_WINDOWS,
      min: 1,
      max: MAX_WINDOWS,
      env: { extract: "MAX_WINDOWS" },
    })
    /** Model calls one extraction makes at once, 1 to 32. */
    .integer("llmConcurrency", {
      default: EXTRACT_DEFAULTS.LLM_CONCURRENCY,
      min: 1,
      max: MAX_LLM_CONCURRENCY,
      env: { extract: "LLM_CONCURRENCY" },
    })
    /**
     * The longest one model call may take in all, its retries and the reading of the reply
     * included (both model services), from 1s to less than 14m 30s (Lambda's 15 minutes less the
     * extraction function's margin): a stalled or trickling endpoint fails there, named, and the
     * segment is retried. The extraction function's timeout is sized from it.
     */
    .duration("llmDeadline", {
      default: EXTRACT_DEFAULTS.LLM_DEADLINE,
      env: { extract: "LLM_DEADLINE" },
      check: ({ llmDeadline: ms }) => {
        // A call must end before the function's timeout less the margin, or it ends in a timeout.
        const { min } = EXTRACT_BOUNDS.llmDeadlineMs;
        const below = LAMBDA_MAX_TIMEOUT_MS - EXTRACT_MARGIN_MS;
        if (ms < min || ms >= below) {
          fail(
            `must be from ${min} ms to less than ${below} ms (Lambda's 15 minutes less the extraction function's ${EXTRACT_MARGIN_MS} ms margin) ${got(ms)}`,
          );
        }
      },
    })
    /**
     * The output-token limit of every model call (both model services), 256 to 65536: a ceiling
     * on what one reply can cost and hold.
     */
    .integer("maxOutputTokens", {
      default: EXTRACT_DEFAULTS.MAX_OUTPUT_TOKENS,
      ...EXTRACT_BOUNDS.outputTokens,
      env: { extract: "MAX_OUTPUT_TOKENS" },
    })
    /**
     * Characters of one message's text a prompt shows, 200 to 400000; longer texts are cut and
     * counted in the result (`trimmed.turnTexts`).
     */
    .integer("maxTurnChars", {
      default: EXTRACT_DEFAULTS.MAX_TURN_CHARS,
      ...EXTRACT_BOUNDS.turnChars,
      env: { extract: "MAX_TURN_CHARS" },
    })
    /** How Bedrock is asked for JSON: `tool` (every Converse model with tool use) or `json_schema`. */
    .choice("bedrockOutput", {
      options: ["json_schema", "tool"],
      default: EXTRACT_DEFAULTS.BEDROCK_OUTPUT,
      env: { extract: "BEDROCK_OUTPUT" },
    })
    /**
     * Extraction functions running at once (the segment queue event source's maximum
     * concurrency, 2 to 1000): with llmConcurrency, the deployment's rate limit on the model.
     */
    .integer("extractConcurrency", {
      default: String(EVENT_SOURCE_CONCURRENCY.min),
      ...EVENT_SOURCE_CONCURRENCY,
    })
    /**
     * Input and output tokens extraction may spend per UTC day, all channels together, 1000 to a
     * trillion: once reached, segments wait (no model call) until the next day or until it is
     * raised, and the `TokenBudgetReached` alarm fires. Ask summaries (askModelId) count too.
     */
    .integer("dailyTokenBudget", {
      default: EXTRACT_DEFAULTS.DAILY_TOKEN_BUDGET,
      min: MIN_TOKEN_BUDGET,
      max: MAX_TOKEN_BUDGET,
      env: { extract: "DAILY_TOKEN_BUDGET" },
    })
    /**
     * Input and output tokens one channel may spend per UTC day, 1000 to dailyTokenBudget; unset,
     * a quarter of dailyTokenBudget, so that one channel (a stranger's chat, a flood) cannot
     * spend the day's budget and pause every other.
     */
    .optionalInteger("channelDailyTokenBudget", {
      min: MIN_TOKEN_BUDGET,
      max: MAX_TOKEN_BUDGET,
      env: { extract: "CHANNEL_TOKEN_BUDGET" },
      check: ({ channelDailyTokenBudget: n, dailyTokenBudget }) => {
        if (n !== null && n > dailyTokenBudget) {
          fail(`must not exceed dailyTokenBudget (${dailyTokenBudget}) ${got(n)}`);
        }
      },
    })
    /**
     * Failed attempts at a segment before the extraction function moves it to the segment DLQ, 1
     * to 100; waits (a budget pause, the breaker open, a busy segment) are not attempts. With the
     * backoff (30 s doubling to an hour) the default rides out about 9 hours of provider outage.
     */
    .integer("extractMaxAttempts", {
      default: EXTRACT_DEFAULTS.MAX_ATTEMPTS,
      min: 1,
      max: MAX_EXTRACT_ATTEMPTS,
      env: { extract: "MAX_ATTEMPTS" },
    })
    /**
     * Provider failures in a row (throttled past the retries, 5xx, timeouts, unreachable,
     * 401/403) after which the extraction function stops calling the model for breakerCooldown,
     * 1 to 100: segments wait instead of hammering a dead endpoint.
     */
    .integer("breakerFailures", {
      default: EXTRACT_DEFAULTS.BREAKER_FAILURES,
      ...EXTRACT_BOUNDS.breakerFailures,
      env: { extract: "BREAKER_FAILURES" },
    })
    /** How long the circuit breaker stays open before a call may try again, 10s to 1h. */
    .duration("breakerCooldown", {
      default: EXTRACT_DEFAULTS.BREAKER_COOLDOWN,
      env: { extract: "BREAKER_COOLDOWN" },
      check: ({ breakerCooldown: ms }) => {
        const { min, max } = EXTRACT_BOUNDS.breakerCooldownMs;
        if (ms < min || ms > max) fail(`must be from ${min} ms to ${max} ms ${got(ms)}`);
      },
    })
    /**
     * The `TokenSpendHourly` alarm fires on an hour's spend that would use dailyTokenBudget in
     * this many hours, 1 to 24.
     */
    .integer("tokenPaceHours", { default: "8", min: 1, max: 24 })
    /**
     * The `TokenSpendDaily` alarm fires on 24 hours' spend past this share of dailyTokenBudget,
     * more than 0 and at most 1.
     */
    .fraction("dailySpendShare", { default: 0.8, zero: false, one: true })
    /**
     * The `ExtractionFailureRate` alarm fires when more than this share of extraction attempts
     * in 15 minutes failed, more than 0 and less than 1.
     */
    .fraction("extractFailureRate", { default: 0.5, zero: false, one: false })
    /**
     * The share of a segment's messages edited or deleted after its extraction past which it is
     * extracted again without them, 0 to 1: 0 on every change, 1 never (a change is always
     * redacted from the results; docs/extraction.md).
     */
    .fraction("reextractChangedShare", {
      default: Number(EXTRACT_DEFAULTS.REEXTRACT_CHANGED_SHARE),
      zero: true,
      one: true,
      env: { extract: "REEXTRACT_CHANGED_SHARE" },
    })
    /**
     * Show system messages (joins, parts, topic changes, pins: `kind: system`) to the model too.
     * Off, they are stored, segmented and in each result's messages, but no prompt shows them.
     * Turning it on re-extracts segments as they are delivered again (it is part of the results'
     * prompt version).
     */
    .flag("showSystemMessages", {
      default: (EXTRACT_DEFAULTS.SHOW_SYSTEM_MESSAGES as string) === "true",
      env: { extract: "SHOW_SYSTEM_MESSAGES" },
    })
    /** The OpenAI-compatible endpoint, `https://…` (required with `openai`). */
    .text("openaiBaseUrl", {
      rule: { pattern: HTTPS_URL, rule: "an https:// URL" },
      env: { extract: "OPENAI_BASE_URL" },
    })
    /**
     * Where the endpoint's API key is kept, never the key itself; with `openai`, exactly one of
     * this and openaiApiKeyParameter: a Secrets Manager secret's full ARN, or the name of an SSM
     * SecureString parameter. Either in the stack's region (the function reads it there at cold
     * start), encrypted with the AWS managed key or a customer key whose key policy lets the
     * extraction role decrypt: the stack grants the read of that one secret or parameter, no KMS
     * key. A value that is neither is not echoed (it may be the key).
     */
    .text("openaiApiKeySecret", {
      rule: {
        pattern: SECRET_ARN,
        rule: "a Secrets Manager secret's full ARN, not the key itself",
        secret: true,
      },
      env: { extract: "OPENAI_API_KEY_SECRET" },
    })
    /** See openaiApiKeySecret. */
    .text("openaiApiKeyParameter", {
      rule: {
        pattern: PARAMETER_NAME,
        rule: "an SSM parameter name such as /convoseg/openai-api-key, not starting with aws or ssm (not an ARN, not the key itself)",
        secret: true,
      },
      env: { extract: "OPENAI_API_KEY_PARAMETER" },
      check: (values) => {
        const parameter = values.openaiApiKeyParameter;
        if (parameter !== undefined && parameter.length > MAX_PARAMETER_NAME) {
          fail(`must be at most ${MAX_PARAMETER_NAME} characters`);
        }
        openaiEndpoint(values);
      },
    })
    /**
     * USD per million input and output tokens, for the dashboard's cost estimate. The defaults
     * are Amazon Nova Lite's published Bedrock on-demand prices (us-east-1); set yours for
     * another model, region or endpoint.
     */
    .price("inputTokenPrice", { default: NOVA_LITE_PRICES.input, max: MAX_TOKEN_PRICE })
    /** See inputTokenPrice. */
    .price("outputTokenPrice", { default: NOVA_LITE_PRICES.output, max: MAX_TOKEN_PRICE });
