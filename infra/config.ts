import { RetentionDays } from "aws-cdk-lib/aws-logs";
import { parseDuration } from "../lib/duration/index.js";
import { DEFAULT_TIMEOUT_MS as LLM_CALL_TIMEOUT_MS, type Route } from "../lib/extraction/index.js";
import {
  DEFAULT_BEDROCK_MODEL_ID,
  EXTRACT_DEFAULTS,
  type ExtractFunctionConfig,
  type ExtractVariable,
  KnowledgeConfigError,
  ROUTES,
  readExtractConfig,
} from "../lib/knowledge/index.js";
import { MAX_CHANNEL_CONCURRENCY, MAX_WORKERS, SEGMENT_DEFAULTS } from "../lib/pipeline/index.js";
import { MAX_DUE_SHARDS } from "../lib/pipeline/schema/index.js";

/** A duration as `parseDuration` reads it (`90s`, `5m`, `24h`), or a number of milliseconds. */
export type DurationSetting = string | number;

export type QueueType = "fifo" | "standard";

/** The model services the deployed extraction function may call. */
export type ExtractorSetting = "bedrock" | "openai";

/**
 * What a deployment may configure. Each setting comes from the stack props, else from CDK
 * context under the same name (`cdk deploy -c settle=12h`), else from its default: the
 * segmenter's own defaults (`SEGMENT_DEFAULTS`), so that the deployed function and a local run
 * agree unless told otherwise.
 */
export interface ConvosegSettings {
  /** Most messages in one segment (default 500). */
  maxSize?: number;
  /** Silence that ends a conversation (default 24h). */
  settle?: DurationSetting;
  /** Fewest messages a segment needs; smaller pieces are dropped and counted (default 1). */
  minItems?: number;
  /** Extra quiet time before a trailing conversation counts as settled: ingestion reordering (default 1m). */
  grace?: DurationSetting;
  /** How often the segmentation tick runs: whole minutes, 1m to 60m (default 5m). */
  schedule?: DurationSetting;
  /** A tick takes no new channel when less than this is left of its timeout (default 20s). */
  budgetMargin?: DurationSetting;
  /** The segment queue: `fifo` keeps each channel's segments in order (default `fifo`). */
  queueType?: QueueType;
  /**
   * Shards of the channels table's due index, 1 to 1000 (default 4). Each shard is one GSI
   * partition (about 1,000 due marks/s); raise it only for more marks than that per shard.
   * Users' own `IngestClient`s must be given the same count (`dueShards`).
   */
  dueShards?: number;
  /**
   * The count before a change of dueShards that shrinks it: the tick also reads the shards only
   * it had, until the `DueItemsInOldShards` metric reads 0 with every writer on the new count;
   * then remove this setting (default none).
   */
  previousDueShards?: number;
  /**
   * Workers a tick fans out to, 1 to dueShards (default 1: the scheduled function does the whole
   * tick). With more, it becomes a dispatcher that starts a worker function (reserved
   * concurrency = workers) per share of the due index; see the README's "Scaling out".
   */
  workers?: number;
  /** Channels one tick (or each worker) processes at once, 1 to 64 (default 8). */
  channelConcurrency?: number;
  /** Largest segment message body, and the segment queue's MaximumMessageSize (default 262144). */
  maxBodyBytes?: number;
  /** Retention of the functions' log groups, a CloudWatch Logs value such as 30 or 365 (default 30). */
  logRetentionDays?: number;
  /** Subscribes this address to the alarm topic (default: no subscription). */
  alarmEmail?: string;
  /**
   * Role ARNs besides the tick's that may send to the segment queue, for operators who redrive
   * its dead-letter queue (default none: only the tick sends).
   */
  segmentQueueSenders?: string[];
  /** `retain` (default) keeps the tables, with deletion protection, when the stack is deleted. */
  dataRemovalPolicy?: "retain" | "destroy";
  /** The extraction function's model service: `bedrock` (default) or an OpenAI-compatible `openai`. */
  extractor?: ExtractorSetting;
  /**
   * The Bedrock model id (default `amazon.nova-lite-v1:0`), or a cross-region inference profile id
   * (`us.amazon.nova-lite-v1:0`); with `openai`, the endpoint's model name (required then).
   */
  modelId?: string;
  /**
   * How a segment is cut into windows for the model. This and the window settings below default
   * to the function's own defaults (`EXTRACT_DEFAULTS`: ROUTE, WINDOW_SIZE, …).
   */
  route?: Route;
  /** The `sliding` route's window, in turns, 1 to 1000. */
  windowSize?: number;
  /** Turns the `sliding` route's windows share, less than windowSize. */
  overlap?: number;
  /** The `prefix` and `non_prefix` routes' step, in user turns, 1 to 1000. */
  prefixStep?: number;
  /** Windows kept per segment on the `prefix` and `non_prefix` routes (the last ones), 1 to 1000. */
  maxWindows?: number;
  /** Model calls one extraction makes at once, 1 to 32. */
  llmConcurrency?: number;
  /** How Bedrock is asked for JSON: `tool` (every Converse model with tool use) or `json_schema`. */
  bedrockOutput?: "json_schema" | "tool";
  /**
   * Extraction functions running at once (the segment queue event source's maximum concurrency,
   * 2 to 1000; default 2): with llmConcurrency, the deployment's rate limit on the model.
   */
  extractConcurrency?: number;
  /** The OpenAI-compatible endpoint, `https://…` (required with `openai`). */
  openaiBaseUrl?: string;
  /**
   * Where the endpoint's API key is kept, never the key itself; with `openai`, exactly one: a
   * Secrets Manager secret's full ARN, or the name of an SSM SecureString parameter. Either in the
   * stack's region (the function reads it there at cold start), encrypted with the AWS managed
   * key or a customer key whose key policy lets the extraction role decrypt: the stack grants
   * the read of that one secret or parameter, no KMS key.
   */
  openaiApiKeySecret?: string;
  openaiApiKeyParameter?: string;
  /**
   * USD per million input and output tokens, for the dashboard's cost estimate. The defaults,
   * 0.06 and 0.24, are Amazon Nova Lite's published Bedrock on-demand prices (us-east-1); set
   * yours for another model, region or endpoint.
   */
  inputTokenPrice?: number;
  outputTokenPrice?: number;
  /** Physical names; generated by CloudFormation when omitted. */
  messagesTableName?: string;
  channelsTableName?: string;
  conversationsTableName?: string;
  resultsTableName?: string;
  segmentQueueName?: string;
  ingestQueueName?: string;
  dashboardName?: string;
}

export type SettingName = keyof ConvosegSettings;

/** Where the OpenAI-compatible endpoint's API key is kept. */
export type ApiKeyLocation = { kind: "secret"; arn: string } | { kind: "parameter"; name: string };

/** The extraction function's validated settings. */
export interface ExtractConfig {
  extractor: ExtractorSetting;
  modelId: string;
  route: Route;
  windowSize: number;
  overlap: number;
  prefixStep: number;
  maxWindows: number;
  llmConcurrency: number;
  bedrockOutput: "json_schema" | "tool";
  /** The event source's maximum concurrency. */
  concurrency: number;
  openaiBaseUrl?: string;
  apiKey?: ApiKeyLocation;
  /** The function's timeout, and its lease on a segment: {@link extractTimeoutMs}. */
  timeoutMs: number;
  /** USD per million tokens. */
  inputTokenPrice: number;
  outputTokenPrice: number;
}

/** The validated configuration, durations in milliseconds. */
export interface ConvosegConfig {
  maxSize: number;
  settleMs: number;
  minItems: number;
  graceMs: number;
  scheduleMinutes: number;
  /** The segmentation function's timeout: the schedule period less a gap, at most 15 minutes. */
  tickTimeoutMs: number;
  budgetMarginMs: number;
  fifo: boolean;
  maxBodyBytes: number;
  dueShards: number;
  previousDueShards: number | null;
  workers: number;
  channelConcurrency: number;
  logRetention: RetentionDays;
  alarmEmail?: string;
  segmentQueueSenders: string[];
  retainData: boolean;
  extract: ExtractConfig;
  /** The segment queue's visibility timeout: six times the extraction function's timeout. */
  segmentVisibilityTimeoutMs: number;
  names: {
    messagesTable?: string;
    channelsTable?: string;
    conversationsTable?: string;
    resultsTable?: string;
    segmentQueue?: string;
    ingestQueue?: string;
    dashboard?: string;
  };
}

/** Where a setting's value came from, named in error messages. */
export type SettingSource = "props" | "context" | "default";
type Source = SettingSource;
const SOURCE_NOTE: Record<Source, string> = {
  props: " (from stack props)",
  context: " (from CDK context)",
  default: "",
};

/** A configuration error: the message names the setting and where its value came from. */
export class ConfigError extends Error {
  override readonly name: string = "ConfigError";
  constructor(
    readonly setting: SettingName,
    source: Source,
    problem: string,
  ) {
    super(`convoseg: invalid setting ${setting}${SOURCE_NOTE[source]}: ${problem}`);
  }
}

const LAMBDA_MAX_TIMEOUT_MS = 15 * 60_000;
/** Amazon Nova Lite's published on-demand prices in us-east-1, USD per million tokens. */
const NOVA_LITE_PRICES = { input: 0.06, output: 0.24 };
/** The segment function's own bound on maxSize and minItems. */
const MAX_SEGMENT_MESSAGES = 100_000;
const MINUTE_MS = 60_000;
/** SQS allows 1 KiB to 1 MiB; the tick wants room for a one-message reference of the longest ids. */
const MIN_BODY_BYTES = 16 * 1024;
const MAX_BODY_BYTES = 1024 * 1024;
const LOG_RETENTION_DAYS = new Set(
  Object.values(RetentionDays).filter(
    (days): days is RetentionDays => typeof days === "number" && days !== RetentionDays.INFINITE,
  ),
);
/** Names: DynamoDB tables; SQS queues, leaving room for the `-dlq` suffix; CloudWatch dashboards. */
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;
const QUEUE_NAME = /^[A-Za-z0-9_-]{1,71}$/;
const FIFO_QUEUE_NAME = /^[A-Za-z0-9_-]{1,71}\.fifo$/;
const DASHBOARD_NAME = /^[A-Za-z0-9_-]{1,255}$/;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
/**
 * A Bedrock model id or inference profile id (`provider.model-version:n`, `us.provider.…`): it
 * goes into the IAM resource ARN, so no wildcard, slash or ARN passes.
 */
const BEDROCK_MODEL_ID = /^[a-z0-9][a-z0-9-]*\.[A-Za-z0-9][A-Za-z0-9._:-]{0,200}$/;
/** An OpenAI-compatible model name: printable, no spaces. */
const OPENAI_MODEL = /^[\x21-\x7e]{1,256}$/;
/** The key travels with every request: HTTPS only. */
const HTTPS_URL = /^https:\/\/[^\s/]+[^\s]*$/;
const SECRET_ARN =
  /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]{1,512}$/;
/** An SSM parameter name (not an ARN); hierarchical names start with `/`. */
const PARAMETER_NAME = /^(?!\/?(aws|ssm))(?:[A-Za-z0-9_.-]+|(?:\/[A-Za-z0-9_.-]+)+)$/i;
const MAX_PARAMETER_NAME = 1011;
/**
 * System-defined cross-region inference profiles prefix the model id with their geography
 * (`us.amazon.nova-lite-v1:0`); model ids themselves start with the provider (`amazon.`).
 */
const INFERENCE_PROFILE_PREFIX = /^(us|us-gov|eu|apac|jp|au|ca|global)\./;
/** `readExtractConfig`'s bounds, so that resolveConfig names them first (the cross-check agrees). */
const MAX_WINDOW_TURNS = 1000;
const MAX_WINDOWS = 1000;
const MAX_LLM_CONCURRENCY = 32;
/** The SQS event source's maximum concurrency (Lambda allows 2 to 1000). */
const MIN_EXTRACT_CONCURRENCY = 2;
const MAX_EXTRACT_CONCURRENCY = 1000;
/** Well above any model's list price: a larger number is a price per thousand taken for a million. */
const MAX_TOKEN_PRICE = 1000;
const PRICE = /^\d+(\.\d+)?$/;
/** AWS's advice for Lambda event sources: six times the function timeout. */
const VISIBILITY_PER_TIMEOUT = 6;
/** The extraction function's time besides model calls: reads, lease, results, a cold start. */
const EXTRACT_MARGIN_MS = 30_000;
/** Calls a window may take: the first, and one repair of an invalid reply. */
const CALLS_PER_WINDOW = 2;

/**
 * The tick's timeout for a schedule period: the period less a gap (a tenth, at least 10 s) so
 * that a tick ends before the next starts, capped at Lambda's 15 minutes.
 */
export function tickTimeoutMs(scheduleMs: number): number {
  return Math.min(LAMBDA_MAX_TIMEOUT_MS, scheduleMs - Math.max(10_000, scheduleMs / 10));
}

/** What sizes an extraction: the largest segment and how the route cuts it. */
export type ExtractSizing = Pick<
  ExtractConfig,
  "route" | "windowSize" | "overlap" | "prefixStep" | "maxWindows" | "llmConcurrency"
> & { maxSize: number };

/**
 * The most windows the route cuts a segment of `maxSize` messages into: `sliding`
 * ceil((maxSize - overlap) / (windowSize - overlap)); `prefix` and `non_prefix` a window per
 * `prefixStep` user turns plus the rest, at most `maxWindows`; `full` one; `full2` two.
 */
export function extractWindows(sizing: ExtractSizing): number {
  const { maxSize, windowSize, overlap, prefixStep, maxWindows } = sizing;
  switch (sizing.route) {
    case "sliding":
      return Math.max(1, Math.ceil((maxSize - overlap) / (windowSize - overlap)));
    case "prefix":
    case "non_prefix":
      return Math.min(maxWindows, Math.ceil(maxSize / prefixStep) + 1);
    case "full":
      return 1;
    case "full2":
      return 2;
  }
}

/**
 * Rounds of model calls one after another for the largest segment: its windows `llmConcurrency`
 * at a time. The `prefix` route runs its first window alone (the others share its prompt as a
 * cached prefix), and `full2`'s second pass needs the first's answer.
 */
export function extractRounds(sizing: ExtractSizing): number {
  const windows = extractWindows(sizing);
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
 * running into the adapters' timeout (`DEFAULT_TIMEOUT_MS`, 120 s) and then a repair call that
 * does too, plus a margin for the reads and writes around them; at most Lambda's 15 minutes.
 * A segment that needs longer is not lost: each accepted window reply is stored as it comes, so
 * the retry after a timeout asks only for the rest (`WindowsReused`).
 */
export function extractTimeoutMs(sizing: ExtractSizing): number {
  return Math.min(
    LAMBDA_MAX_TIMEOUT_MS,
    extractRounds(sizing) * CALLS_PER_WINDOW * LLM_CALL_TIMEOUT_MS + EXTRACT_MARGIN_MS,
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

/**
 * Validates the settings: from `props` first, else from `context(name)` (CDK context, whose
 * values arrive as strings from the command line), else the defaults. Throws a
 * {@link ConfigError} naming the first bad setting.
 */
export function resolveConfig(
  props: ConvosegSettings,
  context: (name: SettingName) => unknown,
): ConvosegConfig {
  const sourced = (name: SettingName): { value: unknown; source: Source } => {
    if (props[name] !== undefined) return { value: props[name], source: "props" };
    const value = context(name);
    return value === undefined ? { value, source: "default" } : { value, source: "context" };
  };
  const fail = (name: SettingName, problem: string): never => {
    throw new ConfigError(name, sourced(name).source, problem);
  };
  const got = (value: unknown) => `(got ${JSON.stringify(value)})`;

  const duration = (name: SettingName, fallback: string): number => {
    const { value } = sourced(name);
    const text = value === undefined ? fallback : value;
    if (typeof text !== "string" && typeof text !== "number") {
      return fail(name, `must be a duration such as 90s, 15m or 24h ${got(text)}`);
    }
    try {
      return parseDuration(String(text), name);
    } catch (error) {
      return fail(name, (error as Error).message.replace(`${name} `, ""));
    }
  };
  const integer = (name: SettingName, fallback: string, min: number, max?: number): number => {
    const { value } = sourced(name);
    const text = String(value ?? fallback);
    const n = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min || n > (max ?? n)) {
      const range = max === undefined ? `>= ${min}` : `from ${min} to ${max}`;
      fail(name, `must be an integer ${range} ${got(value)}`);
    }
    return n;
  };
  const choice = <T extends string>(name: SettingName, options: readonly T[], fallback: T): T => {
    const { value } = sourced(name);
    if (value === undefined) return fallback;
    if (!options.includes(value as T)) {
      const allowed = options.length > 2 ? `one of ${options.join(", ")}` : options.join(" or ");
      fail(name, `must be ${allowed} ${got(value)}`);
    }
    return value as T;
  };
  /** A string matching `pattern`; `secret` for one that may be a key by mistake: not echoed. */
  const text = (
    name: SettingName,
    pattern: RegExp,
    rule: string,
    secret = false,
  ): string | undefined => {
    const { value } = sourced(name);
    if (value === undefined) return undefined;
    if (typeof value !== "string" || !pattern.test(value)) {
      fail(
        name,
        secret ? `must be ${rule} (the value is not shown)` : `must be ${rule} ${got(value)}`,
      );
    }
    return value as string;
  };

  /** USD per million tokens: a non-negative number (a decimal string from the command line). */
  const price = (name: SettingName, fallback: number): number => {
    const { value } = sourced(name);
    if (value === undefined) return fallback;
    const n = typeof value === "number" ? value : PRICE.test(String(value)) ? Number(value) : NaN;
    if (!Number.isFinite(n) || n < 0 || n > MAX_TOKEN_PRICE) {
      fail(name, `must be USD per million tokens, from 0 to ${MAX_TOKEN_PRICE} ${got(value)}`);
    }
    return n;
  };

  /** A list of IAM role ARNs: an array in props, comma-separated in CDK context. */
  const roleArns = (name: SettingName): string[] => {
    const { value } = sourced(name);
    if (value === undefined) return [];
    const list = typeof value === "string" ? value.split(",").map((v) => v.trim()) : value;
    if (!Array.isArray(list) || !list.every((v) => typeof v === "string" && ROLE_ARN.test(v))) {
      return fail(name, `must be IAM role ARNs (arn:aws:iam::<account>:role/<name>) ${got(value)}`);
    }
    return list as string[];
  };

  /** The extraction settings, for segments of at most `maxSize` messages. */
  const resolveExtract = (maxSize: number): ExtractConfig => {
    const extractor = choice("extractor", ["bedrock", "openai"] as const, "bedrock");
    const openai = extractor === "openai";
    const modelId = openai
      ? text("modelId", OPENAI_MODEL, "the endpoint's model name (no spaces)")
      : (text(
          "modelId",
          BEDROCK_MODEL_ID,
          "a Bedrock model id or inference profile id such as amazon.nova-lite-v1:0 (no wildcard or ARN)",
        ) ?? DEFAULT_BEDROCK_MODEL_ID);
    if (modelId === undefined) fail("modelId", "must be set when extractor is openai");
    const route = choice("route", ROUTES, EXTRACT_DEFAULTS.ROUTE);
    const windowSize = integer("windowSize", EXTRACT_DEFAULTS.WINDOW_SIZE, 1, MAX_WINDOW_TURNS);
    const overlap = integer("overlap", EXTRACT_DEFAULTS.OVERLAP, 0, MAX_WINDOW_TURNS - 1);
    if (overlap >= windowSize) {
      fail("overlap", `must be less than windowSize (${windowSize}) ${got(overlap)}`);
    }
    const sizing: ExtractSizing = {
      maxSize,
      route,
      windowSize,
      overlap,
      prefixStep: integer("prefixStep", EXTRACT_DEFAULTS.PREFIX_STEP, 1, MAX_WINDOW_TURNS),
      maxWindows: integer("maxWindows", EXTRACT_DEFAULTS.MAX_WINDOWS, 1, MAX_WINDOWS),
      llmConcurrency: integer(
        "llmConcurrency",
        EXTRACT_DEFAULTS.LLM_CONCURRENCY,
        1,
        MAX_LLM_CONCURRENCY,
      ),
    };
    const bedrockOutput = choice(
      "bedrockOutput",
      ["json_schema", "tool"] as const,
      EXTRACT_DEFAULTS.BEDROCK_OUTPUT,
    );
    const concurrency = integer(
      "extractConcurrency",
      String(MIN_EXTRACT_CONCURRENCY),
      MIN_EXTRACT_CONCURRENCY,
      MAX_EXTRACT_CONCURRENCY,
    );
    const openaiBaseUrl = text("openaiBaseUrl", HTTPS_URL, "an https:// URL");
    // Where the key is kept, never the key: a value that is neither is not echoed (it may be one).
    const secret = text(
      "openaiApiKeySecret",
      SECRET_ARN,
      "a Secrets Manager secret's full ARN, not the key itself",
      true,
    );
    const parameter = text(
      "openaiApiKeyParameter",
      PARAMETER_NAME,
      "an SSM parameter name such as /convoseg/openai-api-key, not starting with aws or ssm (not an ARN, not the key itself)",
      true,
    );
    if (parameter !== undefined && parameter.length > MAX_PARAMETER_NAME) {
      fail("openaiApiKeyParameter", `must be at most ${MAX_PARAMETER_NAME} characters`);
    }
    let apiKey: ApiKeyLocation | undefined;
    if (openai) {
      if (openaiBaseUrl === undefined)
        fail("openaiBaseUrl", "must be set when extractor is openai");
      if (secret !== undefined && parameter !== undefined) {
        fail("openaiApiKeySecret", "and openaiApiKeyParameter are both set: set only one");
      }
      if (secret === undefined && parameter === undefined) {
        fail(
          "openaiApiKeySecret",
          "or openaiApiKeyParameter must name where the API key is kept when extractor is openai (never the key itself)",
        );
      }
      apiKey =
        secret !== undefined
          ? { kind: "secret", arn: secret }
          : { kind: "parameter", name: parameter as string };
    } else {
      const given = { openaiBaseUrl, openaiApiKeySecret: secret, openaiApiKeyParameter: parameter };
      for (const [name, value] of Object.entries(given)) {
        if (value !== undefined) fail(name as SettingName, "applies only when extractor is openai");
      }
    }
    return {
      extractor,
      modelId: modelId as string,
      route,
      windowSize,
      overlap,
      prefixStep: sizing.prefixStep,
      maxWindows: sizing.maxWindows,
      llmConcurrency: sizing.llmConcurrency,
      bedrockOutput,
      concurrency,
      openaiBaseUrl,
      apiKey,
      timeoutMs: extractTimeoutMs(sizing),
      inputTokenPrice: price("inputTokenPrice", NOVA_LITE_PRICES.input),
      outputTokenPrice: price("outputTokenPrice", NOVA_LITE_PRICES.output),
    };
  };

  const maxSize = integer("maxSize", SEGMENT_DEFAULTS.MAX_SIZE, 1, MAX_SEGMENT_MESSAGES);
  const minItems = integer("minItems", SEGMENT_DEFAULTS.MIN_ITEMS, 1, MAX_SEGMENT_MESSAGES);
  if (minItems > maxSize) fail("minItems", `must not exceed maxSize (${maxSize}) ${got(minItems)}`);
  const settleMs = duration("settle", SEGMENT_DEFAULTS.SETTLE);
  const graceMs = duration("grace", SEGMENT_DEFAULTS.GRACE);
  const scheduleMs = duration("schedule", "5m");
  if (scheduleMs % MINUTE_MS !== 0 || scheduleMs < MINUTE_MS || scheduleMs > 60 * MINUTE_MS) {
    fail("schedule", `must be whole minutes from 1m to 60m (EventBridge rates) ${got(scheduleMs)}`);
  }
  const timeoutMs = tickTimeoutMs(scheduleMs);
  const budgetMarginMs = duration("budgetMargin", SEGMENT_DEFAULTS.BUDGET_MARGIN);
  if (budgetMarginMs >= timeoutMs) {
    fail(
      "budgetMargin",
      `must be less than the tick timeout (${timeoutMs} ms) ${got(budgetMarginMs)}`,
    );
  }
  const fifo = choice("queueType", ["fifo", "standard"], "fifo") === "fifo";
  const maxBodyBytes = integer(
    "maxBodyBytes",
    SEGMENT_DEFAULTS.MAX_BODY_BYTES,
    MIN_BODY_BYTES,
    MAX_BODY_BYTES,
  );
  const dueShards = integer("dueShards", SEGMENT_DEFAULTS.DUE_SHARDS, 1, MAX_DUE_SHARDS);
  const previousDueShards =
    sourced("previousDueShards").value === undefined
      ? null
      : integer("previousDueShards", "", 1, MAX_DUE_SHARDS);
  const workers = integer("workers", SEGMENT_DEFAULTS.WORKERS, 1, MAX_WORKERS);
  if (workers > dueShards) {
    fail(
      "workers",
      `must not exceed dueShards (${dueShards}): each worker owns at least one shard ${got(workers)}`,
    );
  }
  const channelConcurrency = integer(
    "channelConcurrency",
    SEGMENT_DEFAULTS.CHANNEL_CONCURRENCY,
    1,
    MAX_CHANNEL_CONCURRENCY,
  );
  const logRetention = integer("logRetentionDays", "30", 1);
  if (!LOG_RETENTION_DAYS.has(logRetention)) {
    fail(
      "logRetentionDays",
      `must be one of ${[...LOG_RETENTION_DAYS].join(", ")} ${got(logRetention)}`,
    );
  }
  const segmentQueue = fifo
    ? text(
        "segmentQueueName",
        FIFO_QUEUE_NAME,
        "1-71 letters, digits, _ - and .fifo (queueType is fifo)",
      )
    : text("segmentQueueName", QUEUE_NAME, "1-71 letters, digits, _ - (queueType is standard)");
  const extract = resolveExtract(maxSize);
  const names = {
    messagesTable: text("messagesTableName", TABLE_NAME, "3-255 letters, digits, _ . -"),
    channelsTable: text("channelsTableName", TABLE_NAME, "3-255 letters, digits, _ . -"),
    conversationsTable: text("conversationsTableName", TABLE_NAME, "3-255 letters, digits, _ . -"),
    resultsTable: text("resultsTableName", TABLE_NAME, "3-255 letters, digits, _ . -"),
    segmentQueue,
    ingestQueue: text("ingestQueueName", QUEUE_NAME, "1-71 letters, digits, _ -"),
    dashboard: text("dashboardName", DASHBOARD_NAME, "1-255 letters, digits, _ -"),
  };
  const config: ConvosegConfig = {
    maxSize,
    settleMs,
    minItems,
    graceMs,
    scheduleMinutes: scheduleMs / MINUTE_MS,
    tickTimeoutMs: timeoutMs,
    budgetMarginMs,
    fifo,
    maxBodyBytes,
    dueShards,
    previousDueShards,
    workers,
    channelConcurrency,
    logRetention: logRetention as RetentionDays,
    alarmEmail: text("alarmEmail", EMAIL, "an email address"),
    segmentQueueSenders: roleArns("segmentQueueSenders"),
    retainData: choice("dataRemovalPolicy", ["retain", "destroy"], "retain") === "retain",
    extract,
    segmentVisibilityTimeoutMs: VISIBILITY_PER_TIMEOUT * extract.timeoutMs,
    names,
  };
  // The function reads its environment with readExtractConfig at cold start: read it the same
  // way now, so that a setting it would refuse fails synth instead of the first invocation.
  checkExtractEnvironment(
    extractEnvironment(config, { resultsTable: "results", messagesTable: "messages" }),
    (name) => sourced(name).source,
  );
  return config;
}

/** Every variable `readSegmentConfig` reads, so none falls back to a default silently. */
export type SegmentEnvironment = Record<
  keyof typeof SEGMENT_DEFAULTS | "MESSAGES_TABLE" | "CHANNELS_TABLE" | "SEGMENT_QUEUE_URL",
  string
>;

/**
 * The segmentation function's environment. `LEASE` is the function timeout: a tick that died
 * holding a lease is past it by then.
 */
export function segmentEnvironment(
  config: ConvosegConfig,
  resources: { messagesTable: string; channelsTable: string; queueUrl: string },
): SegmentEnvironment {
  return {
    ...SEGMENT_DEFAULTS,
    MESSAGES_TABLE: resources.messagesTable,
    CHANNELS_TABLE: resources.channelsTable,
    SEGMENT_QUEUE_URL: resources.queueUrl,
    SEGMENT_QUEUE_FIFO: String(config.fifo),
    MAX_SIZE: String(config.maxSize),
    SETTLE: String(config.settleMs),
    MIN_ITEMS: String(config.minItems),
    GRACE: String(config.graceMs),
    LEASE: String(config.tickTimeoutMs),
    MAX_BODY_BYTES: String(config.maxBodyBytes),
    BUDGET_MARGIN: String(config.budgetMarginMs),
    DUE_SHARDS: String(config.dueShards),
    PREVIOUS_DUE_SHARDS: String(config.previousDueShards ?? 0),
    WORKERS: String(config.workers),
    CHANNEL_CONCURRENCY: String(config.channelConcurrency),
  };
}

/** Every variable `readExtractConfig` reads; the key's location only with `openai`. */
export type ExtractFunctionEnvironment = Record<
  Exclude<ExtractVariable, OptionalExtractVariable>,
  string
> &
  Partial<Record<OptionalExtractVariable, string>>;
type OptionalExtractVariable =
  | "OPENAI_BASE_URL"
  | "OPENAI_API_KEY_SECRET"
  | "OPENAI_API_KEY_PARAMETER";

/**
 * The extraction function's environment. `LEASE` is the function timeout: a delivery that died
 * holding a segment's lease is past it by then. The API key's secret ARN or parameter name, never
 * the key: the function fetches it at cold start.
 */
export function extractEnvironment(
  config: ConvosegConfig,
  resources: { resultsTable: string; messagesTable: string },
): ExtractFunctionEnvironment {
  const { extract } = config;
  return {
    ...EXTRACT_DEFAULTS,
    RESULTS_TABLE: resources.resultsTable,
    MESSAGES_TABLE: resources.messagesTable,
    EXTRACTOR: extract.extractor,
    MODEL_ID: extract.modelId,
    ROUTE: extract.route,
    WINDOW_SIZE: String(extract.windowSize),
    OVERLAP: String(extract.overlap),
    PREFIX_STEP: String(extract.prefixStep),
    MAX_WINDOWS: String(extract.maxWindows),
    LLM_CONCURRENCY: String(extract.llmConcurrency),
    BEDROCK_OUTPUT: extract.bedrockOutput,
    LEASE: String(extract.timeoutMs),
    ...(extract.openaiBaseUrl === undefined ? {} : { OPENAI_BASE_URL: extract.openaiBaseUrl }),
    ...(extract.apiKey?.kind === "secret" ? { OPENAI_API_KEY_SECRET: extract.apiKey.arn } : {}),
    ...(extract.apiKey?.kind === "parameter"
      ? { OPENAI_API_KEY_PARAMETER: extract.apiKey.name }
      : {}),
  };
}

/** The setting each extraction variable comes from. */
const EXTRACT_SETTINGS: Partial<Record<ExtractVariable, SettingName>> = {
  RESULTS_TABLE: "resultsTableName",
  MESSAGES_TABLE: "messagesTableName",
  EXTRACTOR: "extractor",
  MODEL_ID: "modelId",
  ROUTE: "route",
  WINDOW_SIZE: "windowSize",
  OVERLAP: "overlap",
  PREFIX_STEP: "prefixStep",
  MAX_WINDOWS: "maxWindows",
  LLM_CONCURRENCY: "llmConcurrency",
  BEDROCK_OUTPUT: "bedrockOutput",
  OPENAI_BASE_URL: "openaiBaseUrl",
  OPENAI_API_KEY_SECRET: "openaiApiKeySecret",
  OPENAI_API_KEY_PARAMETER: "openaiApiKeyParameter",
};

/**
 * Reads `environment` as the extraction function does (`readExtractConfig`). Its complaint about
 * a variable that comes from a setting becomes a {@link ConfigError} naming that setting (the
 * first at fault); one about a variable the stack fixes is rethrown as it is.
 */
export function checkExtractEnvironment(
  environment: ExtractFunctionEnvironment,
  sourceOf: (name: SettingName) => SettingSource = () => "default",
): ExtractFunctionConfig {
  try {
    return readExtractConfig(environment);
  } catch (error) {
    if (!(error instanceof KnowledgeConfigError)) throw error;
    const first = error.problems[0];
    const setting = first && EXTRACT_SETTINGS[first.setting as ExtractVariable];
    if (setting === undefined) throw error;
    throw new ConfigError(
      setting,
      sourceOf(setting),
      `${first.problem} (the extraction function's ${first.setting})`,
    );
  }
}
