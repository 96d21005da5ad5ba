import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import { type Route, windowCount } from "convoseg/extraction";
import { KnowledgeConfigError } from "convoseg/knowledge";
import {
  EXTRACT_DEFAULTS,
  type ExtractFunctionConfig,
  type ExtractVariable,
  readExtractConfig,
} from "convoseg/knowledge/write";
import { SEGMENT_DEFAULTS } from "convoseg/pipeline";
import {
  type ConvosegSettings,
  EXTRACT_MARGIN_MS,
  type ExtractorSetting,
  LAMBDA_MAX_TIMEOUT_MS,
  SETTINGS,
  type SettingName,
  SettingProblem,
  type SettingValues,
  tickTimeoutMs,
} from "./settings/index.js";

export {
  type ConvosegSettings,
  type DurationSetting,
  type ExtractorSetting,
  type QueueType,
  type SettingName,
  tickTimeoutMs,
} from "./settings/index.js";

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
  /** The longest one model call may take, its retries included. */
  llmDeadlineMs: number;
  maxOutputTokens: number;
  maxTurnChars: number;
  bedrockOutput: "json_schema" | "tool";
  /** The event source's maximum concurrency. */
  concurrency: number;
  openaiBaseUrl?: string;
  apiKey?: ApiKeyLocation;
  /** The function's timeout, and its lease on a segment: {@link extractTimeoutMs}. */
  timeoutMs: number;
  /** Input and output tokens per UTC day: all channels, and one channel (null: no limit). */
  dailyTokenBudget: number;
  channelDailyTokenBudget: number | null;
  /** Failed attempts before the function dead-letters a segment. */
  maxAttempts: number;
  /** The circuit breaker: failures in a row that open it, and for how long. */
  breaker: { failures: number; cooldownMs: number };
  /** The changed share of a segment's messages past which it is re-extracted. */
  reextractChangedShare: number;
  /** Whether the model is shown system messages (joins, topic changes) too. */
  showSystemMessages: boolean;
  /** USD per million tokens. */
  inputTokenPrice: number;
  outputTokenPrice: number;
}

/** The validated configuration, durations in milliseconds. */
/** The Discord poller's settings, when `discordChannels` turns it on. */
export interface DiscordConfig {
  channels: string[];
  tokenSecretArn: string;
  scheduleMinutes: number;
  rereadWindow: number;
  backfillFrom?: string;
}

/** The read API, when `api` turns it on: IAM-authorized, or JWT with an issuer. */
export interface ApiConfig {
  jwt?: { issuer: string; audience: string[] };
}

/** The scheduled digest, when `digest` turns it on. */
export interface DigestConfig {
  /** An EventBridge schedule expression. */
  schedule: string;
  periodMs: number;
  /** Unset: every channel of the channels table. */
  channels?: string[];
  slackWebhookSecretArn?: string;
  /** A standard SNS topic each digest is published to. */
  snsTopicArn?: string;
}

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
  /** Days messages and results are kept (null: until deleted); results follow messages unset. */
  retention: { messageDays: number | null; resultDays: number | null };
  alarmEmail?: string;
  /** The Discord poller (absent: not deployed). */
  discord?: DiscordConfig;
  /** The read API (absent: not deployed). */
  api?: ApiConfig;
  /** The scheduled digest (absent: not deployed). */
  digest?: DigestConfig;
  segmentQueueSenders: string[];
  retainData: boolean;
  /** The ingestion function's event source concurrency, and its largest direct batch. */
  ingest: { concurrency: number; maxBatch: number };
  /** On-demand ceilings of every table, request units a second (null: none). */
  tableMaxUnits: { read: number | null; write: number | null };
  extract: ExtractConfig;
  /**
   * The spend and failure alarms: an hour's spend pace (the budget gone in `tokenPaceHours`), a
   * day's share of the budget, and the share of failed attempts.
   */
  alarms: { tokenPaceHours: number; dailySpendShare: number; extractFailureRate: number };
  /** The segment queue's visibility timeout: six times the extraction function's timeout. */
  segmentVisibilityTimeoutMs: number;
  /** The optional connectors; absent, not deployed. */
  connectors: {
    slack?: { signingSecretArn: string; botTokenArn?: string };
    telegram?: { secretTokenArn: string };
  };
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
const SOURCE_NOTE: Record<SettingSource, string> = {
  props: " (from stack props)",
  context: " (from CDK context)",
  default: "",
};

/** A configuration error: the message names the setting and where its value came from. */
export class ConfigError extends Error {
  override readonly name: string = "ConfigError";
  constructor(
    readonly setting: SettingName,
    source: SettingSource,
    problem: string,
  ) {
    super(`convoseg: invalid setting ${setting}${SOURCE_NOTE[source]}: ${problem}`);
  }
}

const MINUTE_MS = 60_000;
/**
 * System-defined cross-region inference profiles prefix the model id with their geography
 * (`us.amazon.nova-lite-v1:0`); model ids themselves start with the provider (`amazon.`).
 */
const INFERENCE_PROFILE_PREFIX = /^(us|us-gov|eu|apac|jp|au|ca|global)\./;
/** AWS's advice for Lambda event sources: six times the function timeout. */
const VISIBILITY_PER_TIMEOUT = 6;
/** Calls a window may take: the first, and one repair of an invalid reply. */
const CALLS_PER_WINDOW = 2;

/** What sizes an extraction: the largest segment and how the route cuts it. */
export type ExtractSizing = Pick<
  ExtractConfig,
  | "route"
  | "windowSize"
  | "overlap"
  | "prefixStep"
  | "maxWindows"
  | "llmConcurrency"
  | "llmDeadlineMs"
> & { maxSize: number };

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

/**
 * Validates the settings: from `props` first, else from `context(name)` (CDK context, whose
 * values arrive as strings from the command line), else the defaults. Reads them in the order of
 * the table (`SETTINGS`, settings.ts) and throws a {@link ConfigError} naming the first bad one.
 */
export function resolveConfig(
  props: ConvosegSettings,
  context: (name: SettingName) => unknown,
): ConvosegConfig {
  const sources = new Map<SettingName, SettingSource>();
  const sourceOf = (name: SettingName) => sources.get(name) ?? "default";
  // Filled row by row: each row's read and checks see the rows above it.
  const values = {} as Record<SettingName, unknown>;
  for (const setting of SETTINGS) {
    const { name } = setting;
    const fromProps = props[name];
    const given = fromProps !== undefined ? fromProps : context(name);
    sources.set(
      name,
      fromProps !== undefined ? "props" : given === undefined ? "default" : "context",
    );
    try {
      values[name] = setting.read(given, values as unknown as SettingValues);
      setting.check?.(values as unknown as SettingValues);
    } catch (error) {
      if (!(error instanceof SettingProblem)) throw error;
      const at = error.setting ?? name;
      throw new ConfigError(at, sourceOf(at), error.message);
    }
  }
  const config = configOf(values as unknown as SettingValues);
  // The function reads its environment with readExtractConfig at cold start: read it the same
  // way now, so that a setting it would refuse fails synth instead of the first invocation.
  checkExtractEnvironment(
    extractEnvironment(config, { resultsTable: "results", messagesTable: "messages" }),
    sourceOf,
  );
  return config;
}

/** What the settings' values set, and what follows from them (timeouts, the key's location). */
function configOf(v: SettingValues): ConvosegConfig {
  const tickTimeout = tickTimeoutMs(v.schedule);
  const windows = {
    route: v.route,
    windowSize: v.windowSize,
    overlap: v.overlap,
    prefixStep: v.prefixStep,
    maxWindows: v.maxWindows,
    llmConcurrency: v.llmConcurrency,
    llmDeadlineMs: v.llmDeadline,
  };
  // Checked with the settings: with openai exactly one of the two is set, without it neither.
  const apiKey: ApiKeyLocation | undefined =
    v.extractor !== "openai"
      ? undefined
      : v.openaiApiKeySecret !== undefined
        ? { kind: "secret", arn: v.openaiApiKeySecret }
        : { kind: "parameter", name: v.openaiApiKeyParameter as string };
  const extract: ExtractConfig = {
    extractor: v.extractor,
    modelId: v.modelId,
    ...windows,
    maxOutputTokens: v.maxOutputTokens,
    maxTurnChars: v.maxTurnChars,
    bedrockOutput: v.bedrockOutput,
    concurrency: v.extractConcurrency,
    openaiBaseUrl: v.openaiBaseUrl,
    apiKey,
    timeoutMs: extractTimeoutMs({ ...windows, maxSize: v.maxSize }),
    dailyTokenBudget: v.dailyTokenBudget,
    channelDailyTokenBudget: v.channelDailyTokenBudget,
    maxAttempts: v.extractMaxAttempts,
    breaker: { failures: v.breakerFailures, cooldownMs: v.breakerCooldown },
    reextractChangedShare: v.reextractChangedShare,
    showSystemMessages: v.showSystemMessages,
    inputTokenPrice: v.inputTokenPrice,
    outputTokenPrice: v.outputTokenPrice,
  };
  return {
    maxSize: v.maxSize,
    settleMs: v.settle,
    minItems: v.minItems,
    graceMs: v.grace,
    scheduleMinutes: v.schedule / MINUTE_MS,
    tickTimeoutMs: tickTimeout,
    budgetMarginMs: v.budgetMargin,
    fifo: v.queueType === "fifo",
    maxBodyBytes: v.maxBodyBytes,
    dueShards: v.dueShards,
    previousDueShards: v.previousDueShards,
    workers: v.workers,
    channelConcurrency: v.channelConcurrency,
    logRetention: v.logRetentionDays as RetentionDays,
    retention: {
      messageDays: v.messageRetentionDays,
      resultDays: v.resultRetentionDays ?? v.messageRetentionDays,
    },
    alarmEmail: v.alarmEmail,
    ...(v.discordChannels !== undefined && v.discordTokenSecret !== undefined
      ? {
          discord: {
            channels: v.discordChannels.split(","),
            tokenSecretArn: v.discordTokenSecret,
            scheduleMinutes: v.discordSchedule / 60_000,
            rereadWindow: v.discordRereadWindow,
            ...(v.discordBackfillFrom ? { backfillFrom: v.discordBackfillFrom } : {}),
          },
        }
      : {}),
    ...(v.api
      ? {
          api:
            v.apiJwtIssuer !== undefined && v.apiJwtAudience !== undefined
              ? { jwt: { issuer: v.apiJwtIssuer, audience: v.apiJwtAudience.split(",") } }
              : {},
        }
      : {}),
    ...(v.digest
      ? {
          digest: {
            schedule: v.digestSchedule,
            periodMs: v.digestPeriod,
            ...(v.digestChannels !== undefined && { channels: v.digestChannels.split(",") }),
            ...(v.digestSlackWebhookSecret !== undefined && {
              slackWebhookSecretArn: v.digestSlackWebhookSecret,
            }),
            ...(v.digestSnsTopic !== undefined && { snsTopicArn: v.digestSnsTopic }),
          },
        }
      : {}),
    segmentQueueSenders: v.segmentQueueSenders,
    retainData: v.dataRemovalPolicy === "retain",
    ingest: { concurrency: v.ingestConcurrency, maxBatch: v.ingestMaxBatch },
    tableMaxUnits: { read: v.tableMaxReadUnits, write: v.tableMaxWriteUnits },
    extract,
    alarms: {
      tokenPaceHours: v.tokenPaceHours,
      dailySpendShare: v.dailySpendShare,
      extractFailureRate: v.extractFailureRate,
    },
    segmentVisibilityTimeoutMs: VISIBILITY_PER_TIMEOUT * extract.timeoutMs,
    connectors: {
      ...(v.slackSigningSecret === undefined
        ? {}
        : {
            slack: {
              signingSecretArn: v.slackSigningSecret,
              ...(v.slackBotTokenSecret === undefined
                ? {}
                : { botTokenArn: v.slackBotTokenSecret }),
            },
          }),
      ...(v.telegramSecretToken === undefined
        ? {}
        : { telegram: { secretTokenArn: v.telegramSecretToken } }),
    },
    names: {
      messagesTable: v.messagesTableName,
      channelsTable: v.channelsTableName,
      conversationsTable: v.conversationsTableName,
      resultsTable: v.resultsTableName,
      segmentQueue: v.segmentQueueName,
      ingestQueue: v.ingestQueueName,
      dashboard: v.dashboardName,
    },
  };
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
  | "OPENAI_API_KEY_PARAMETER"
  | "CHANNEL_TOKEN_BUDGET"
  | "DEAD_LETTER_QUEUE_URL"
  | "SEGMENT_QUEUE_URL"
  | "RESULT_RETENTION_DAYS";

/**
 * The extraction function's environment. `LEASE` is the function timeout: a delivery that died
 * holding a segment's lease is past it by then. The API key's secret ARN or parameter name, never
 * the key: the function reads it when a call needs it. The segment DLQ, where the function moves
 * a segment whose attempts are used up; the segment queue, where its redaction of a change during
 * an extraction sends a segment back past `reextractChangedShare`.
 */
export function extractEnvironment(
  config: ConvosegConfig,
  resources: {
    resultsTable: string;
    messagesTable: string;
    deadLetterQueueUrl?: string;
    segmentQueueUrl?: string;
  },
): ExtractFunctionEnvironment {
  const { extract, retention } = config;
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
    LLM_DEADLINE: String(extract.llmDeadlineMs),
    MAX_OUTPUT_TOKENS: String(extract.maxOutputTokens),
    MAX_TURN_CHARS: String(extract.maxTurnChars),
    BEDROCK_OUTPUT: extract.bedrockOutput,
    LEASE: String(extract.timeoutMs),
    DAILY_TOKEN_BUDGET: String(extract.dailyTokenBudget),
    MAX_ATTEMPTS: String(extract.maxAttempts),
    BREAKER_FAILURES: String(extract.breaker.failures),
    BREAKER_COOLDOWN: String(extract.breaker.cooldownMs),
    REEXTRACT_CHANGED_SHARE: String(extract.reextractChangedShare),
    SHOW_SYSTEM_MESSAGES: String(extract.showSystemMessages),
    ...(extract.channelDailyTokenBudget === null
      ? {}
      : { CHANNEL_TOKEN_BUDGET: String(extract.channelDailyTokenBudget) }),
    ...(retention.resultDays === null
      ? {}
      : { RESULT_RETENTION_DAYS: String(retention.resultDays) }),
    ...(resources.deadLetterQueueUrl === undefined
      ? {}
      : { DEAD_LETTER_QUEUE_URL: resources.deadLetterQueueUrl }),
    ...(resources.segmentQueueUrl === undefined
      ? {}
      : { SEGMENT_QUEUE_URL: resources.segmentQueueUrl }),
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
  LLM_DEADLINE: "llmDeadline",
  MAX_OUTPUT_TOKENS: "maxOutputTokens",
  MAX_TURN_CHARS: "maxTurnChars",
  BEDROCK_OUTPUT: "bedrockOutput",
  DAILY_TOKEN_BUDGET: "dailyTokenBudget",
  CHANNEL_TOKEN_BUDGET: "channelDailyTokenBudget",
  MAX_ATTEMPTS: "extractMaxAttempts",
  BREAKER_FAILURES: "breakerFailures",
  BREAKER_COOLDOWN: "breakerCooldown",
  RESULT_RETENTION_DAYS: "resultRetentionDays",
  REEXTRACT_CHANGED_SHARE: "reextractChangedShare",
  SHOW_SYSTEM_MESSAGES: "showSystemMessages",
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
