import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import { type ChannelScope, parseChannelScope } from "convoseg/ingest";
import { KnowledgeConfigError } from "convoseg/knowledge";
import {
  EXTRACT_DEFAULTS,
  type ExtractFunctionConfig,
  type ExtractVariable,
  type OptionalExtractVariable,
  readExtractConfig,
} from "convoseg/knowledge/config";
import { SEGMENT_DEFAULTS } from "convoseg/pipeline";
import {
  type ConvosegSettings,
  type ExtractorSetting,
  environmentOf,
  type FunctionName,
  readSettings,
  type SettingName,
  type SettingValues,
  settingOf,
  tickTimeoutMs,
} from "./settings/index.js";
import { type DiscordConfig, discordConfig } from "./settings/intake.js";
import { MINUTE_MS } from "./settings/kinds.js";
import { type ExtractSizing, extractTimeoutMs } from "./settings/knowledge.js";
import {
  type ApiConfig,
  type AskConfig,
  apiConfig,
  askConfig,
  type DigestConfig,
  digestConfig,
} from "./settings/outlets.js";

export { type ConvosegSettings, type SettingName, tickTimeoutMs } from "./settings/index.js";

export type { DiscordConfig } from "./settings/intake.js";
export {
  bedrockModel,
  type ExtractSizing,
  extractRounds,
  extractTimeoutMs,
} from "./settings/knowledge.js";
export type { ApiConfig, DigestConfig } from "./settings/outlets.js";

/** Where the OpenAI-compatible endpoint's API key is kept. */
type ApiKeyLocation = { kind: "secret"; arn: string } | { kind: "parameter"; name: string };

/** The extraction function's validated settings. */
export interface ExtractConfig extends Omit<ExtractSizing, "maxSize"> {
  extractor: ExtractorSetting;
  modelId: string;
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
  /** How messages outside threads become segments (docs/conversations.md). */
  conversations: "linked" | "contiguous";
  /** The tick asks extraction's model about unsure links (docs/conversations.md#asking-a-model). */
  askLinks: boolean;
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
  /** The search index on S3 and its layer (false: not deployed, `/search` answers 501). */
  search: boolean;
  /** The search index's embeddings model (absent: keywords only). */
  searchEmbeddings?: { modelId: string };
  /** The ask endpoints (absent: none deployed; each platform's only when set). */
  ask?: AskConfig;
  segmentQueueSenders: string[];
  retainData: boolean;
  /**
   * The ingestion function's event source concurrency, its largest direct batch, and what the
   * ingest queue's producers may send (`producerChannels`, `producerChanges`).
   */
  ingest: {
    concurrency: number;
    maxBatch: number;
    producers: { channels: ChannelScope; changes: boolean };
  };
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
    slack?: { signingSecretArn: string; botTokenArn?: string; channels?: string };
    telegram?: { secretTokenArn: string; chats?: string };
    /** Whether the receivers take one-to-one chats and DMs. */
    privateChats: boolean;
    /** Each receiver's reserved concurrency; 0: none reserved. */
    receiverConcurrency: number;
  };
  /**
   * The variables the settings set in each function's environment, as each declares (the
   * environment functions below add the resources' names and what follows from the settings).
   */
  environments: Record<FunctionName, Record<string, string>>;
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

/** A setting at fault, where its value came from, and what is wrong with it. */
export interface ConfigFault {
  setting: SettingName;
  source: SettingSource;
  problem: string;
}

/**
 * A configuration error: every setting at fault, a line each naming the setting and where its
 * value came from. `setting` is the first of them.
 */
export class ConfigError extends Error {
  override readonly name: string = "ConfigError";
  readonly setting: SettingName;
  constructor(readonly faults: readonly [ConfigFault, ...ConfigFault[]]) {
    super(
      faults
        .map(
          ({ setting, source, problem }) =>
            `convoseg: invalid setting ${setting}${SOURCE_NOTE[source]}: ${problem}`,
        )
        .join("\n"),
    );
    this.setting = faults[0].setting;
  }
}

/** AWS's advice for Lambda event sources: six times the function timeout. */
const VISIBILITY_PER_TIMEOUT = 6;
/**
 * Validates the settings: from `props` first, else from `context(name)` (CDK context, whose
 * values arrive as strings from the command line), else the defaults. Reads them in the order of
 * the table (`SETTINGS`, infra/settings/) and throws a {@link ConfigError} naming every bad one.
 */
export function resolveConfig(
  props: ConvosegSettings,
  context: (name: SettingName) => unknown,
): ConvosegConfig {
  const sources = new Map<SettingName, SettingSource>();
  const sourceOf = (name: SettingName) => sources.get(name) ?? "default";
  const read = readSettings((name) => {
    const fromProps = props[name];
    const given = fromProps !== undefined ? fromProps : context(name);
    sources.set(
      name,
      fromProps !== undefined ? "props" : given === undefined ? "default" : "context",
    );
    return given;
  });
  if (read.values === undefined) {
    const [first, ...rest] = read.faults.map((fault) => ({
      ...fault,
      source: sourceOf(fault.setting),
    }));
    throw new ConfigError([first, ...rest]);
  }
  const config = configOf(read.values);
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
    conversations: v.conversations,
    askLinks: v.askLinks,
    logRetention: v.logRetentionDays as RetentionDays,
    retention: {
      messageDays: v.messageRetentionDays,
      resultDays: v.resultRetentionDays ?? v.messageRetentionDays,
    },
    alarmEmail: v.alarmEmail,
    ...discordConfig(v),
    ...apiConfig(v),
    ...digestConfig(v),
    search: v.search,
    ...(v.searchEmbeddingsModel !== undefined && {
      searchEmbeddings: { modelId: v.searchEmbeddingsModel },
    }),
    ...askConfig(v),
    segmentQueueSenders: v.segmentQueueSenders,
    retainData: v.dataRemovalPolicy === "retain",
    ingest: {
      concurrency: v.ingestConcurrency,
      maxBatch: v.ingestMaxBatch,
      producers: { channels: parseChannelScope(v.producerChannels), changes: v.producerChanges },
    },
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
              ...(v.slackChannels === undefined ? {} : { channels: v.slackChannels }),
            },
          }),
      ...(v.telegramSecretToken === undefined
        ? {}
        : {
            telegram: {
              secretTokenArn: v.telegramSecretToken,
              ...(v.telegramChats === undefined ? {} : { chats: v.telegramChats }),
            },
          }),
      privateChats: v.connectorPrivateChats,
      receiverConcurrency: v.receiverConcurrency,
    },
    environments: {
      segment: environmentOf("segment", v),
      extract: environmentOf("extract", v),
      ingest: environmentOf("ingest", v),
      discord: environmentOf("discord", v),
      digest: environmentOf("digest", v),
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
    ...config.environments.segment,
    LEASE: String(config.tickTimeoutMs),
  };
}

/** Every variable `readExtractConfig` reads; the key's location only with `openai`. */
export type ExtractFunctionEnvironment = Record<
  Exclude<ExtractVariable, OptionalExtractVariable>,
  string
> &
  Partial<Record<OptionalExtractVariable, string>>;

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
  // The settings' own variables (EXTRACTOR and MODEL_ID among them) fill in the rest.
  return {
    ...EXTRACT_DEFAULTS,
    RESULTS_TABLE: resources.resultsTable,
    MESSAGES_TABLE: resources.messagesTable,
    ...config.environments.extract,
    LEASE: String(extract.timeoutMs),
    ...(retention.resultDays === null
      ? {}
      : { RESULT_RETENTION_DAYS: String(retention.resultDays) }),
    ...(resources.deadLetterQueueUrl === undefined
      ? {}
      : { DEAD_LETTER_QUEUE_URL: resources.deadLetterQueueUrl }),
    ...(resources.segmentQueueUrl === undefined
      ? {}
      : { SEGMENT_QUEUE_URL: resources.segmentQueueUrl }),
  } as ExtractFunctionEnvironment;
}

/**
 * The setting each extraction variable comes from: its own (`environmentOf`), or for a table's
 * name, the setting that names the table; RESULT_RETENTION_DAYS follows resultRetentionDays.
 */
function extractSetting(variable: string): SettingName | undefined {
  const resources: Record<string, SettingName> = {
    RESULTS_TABLE: "resultsTableName",
    MESSAGES_TABLE: "messagesTableName",
    RESULT_RETENTION_DAYS: "resultRetentionDays",
  };
  return resources[variable] ?? settingOf("extract", variable);
}

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
    // Every problem, each named by its setting; one that no setting sets is rethrown as it is.
    const faults = error.problems.map(({ setting: variable, problem }) => {
      const setting = extractSetting(variable);
      return (
        setting && {
          setting,
          source: sourceOf(setting),
          problem: `${problem} (the extraction function's ${variable})`,
        }
      );
    });
    const [first, ...rest] = faults;
    if (first === undefined || !rest.every((fault) => fault !== undefined)) throw error;
    throw new ConfigError([first, ...(rest as ConfigFault[])]);
  }
}
