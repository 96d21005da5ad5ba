/**
 * The deployment's settings as one table: for each, its name, how a value is read (its kind and
 * default), the range or rule it must meet, and the checks against the settings read before it.
 * `resolveConfig` (config.ts) reads them in the table's order, so a setting's checks may use any
 * earlier one's value, and the first bad setting is the one reported. The deploy docs' settings
 * table is tested against this one (`test/infra/settings-docs.test.ts`).
 */
import { RetentionDays } from "aws-cdk-lib/aws-logs";
import {
  DEFAULT_REREAD_WINDOW,
  MAX_DISCORD_CHANNELS,
  MAX_REREAD_WINDOW,
} from "convoseg/connectors/discord";
import { parseDuration } from "convoseg/duration";
import { MAX_RETENTION_DAYS } from "convoseg/dynamodb";
import type { Route } from "convoseg/extraction";
import { DEFAULT_MAX_BATCH, MAX_BATCH_LIMIT } from "convoseg/ingest";
import {
  DEFAULT_BEDROCK_MODEL_ID,
  EXTRACT_BOUNDS,
  EXTRACT_DEFAULTS,
  ROUTES,
} from "convoseg/knowledge/write";
import { MAX_CHANNEL_CONCURRENCY, MAX_WORKERS, SEGMENT_DEFAULTS } from "convoseg/pipeline";
import { MAX_DUE_SHARDS } from "convoseg/pipeline/schema";
import { overlapProblem } from "convoseg/windows";

/** Discord channel ids, comma-separated (at most MAX_DISCORD_CHANNELS: checked by count). */
const DISCORD_CHANNELS = new RegExp(`^\\d{1,20}(,\\d{1,20}){0,${MAX_DISCORD_CHANNELS - 1}}$`);
const JWT_ISSUER = /^https:\/\/[A-Za-z0-9.-]{1,253}(:\d{1,5})?(\/[\x21-\x7e]{0,500})?$/;
const JWT_AUDIENCES = /^[\x21-\x2b\x2d-\x7e]{1,200}(,[\x21-\x2b\x2d-\x7e]{1,200}){0,9}$/;
/** EventBridge's schedule expressions, within what CloudFormation takes (256 characters). */
const SCHEDULE_EXPRESSION =
  /^(cron\([0-9*?,/#LW A-Z-]{9,200}\)|rate\(\d{1,5} (minute|minutes|hour|hours|day|days)\))$/;
/** Channel ids without commas or whitespace, 1 to 100 of them. */
const DIGEST_CHANNELS = /^[^\s,]{1,256}(,[^\s,]{1,256}){0,99}$/;
const ISO_DATE_TIME =
  /^(20(1[5-9]|[2-9]\d))-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

/** The highest on-demand ceiling taken: far above any table's default account quota. */
const MAX_TABLE_UNITS = 1_000_000;

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
  /**
   * Most messages in one segment.
   * @default 500
   */
  readonly maxSize?: number;
  /**
   * Silence that ends a conversation.
   * @default "24h"
   */
  readonly settle?: DurationSetting;
  /**
   * Fewest messages a segment needs; smaller pieces are dropped and counted.
   * @default 1
   */
  readonly minItems?: number;
  /**
   * Extra quiet time before a trailing conversation counts as settled: ingestion reordering.
   * @default "1m"
   */
  readonly grace?: DurationSetting;
  /**
   * How often the segmentation tick runs: whole minutes, 1m to 60m.
   * @default "5m"
   */
  readonly schedule?: DurationSetting;
  /**
   * A tick takes no new channel when less than this is left of its timeout.
   * @default "20s"
   */
  readonly budgetMargin?: DurationSetting;
  /**
   * The segment queue: `fifo` keeps each channel's segments in order.
   * @default "fifo"
   */
  readonly queueType?: QueueType;
  /**
   * Shards of the channels table's due index, 1 to 1000. Each shard is one GSI partition (about
   * 1,000 due marks/s); raise it only for more marks than that per shard. Users' own
   * `IngestClient`s must be given the same count (`dueShards`).
   * @default 4
   */
  readonly dueShards?: number;
  /**
   * The count before a change of dueShards that shrinks it: the tick also reads the shards only
   * it had, until the `DueItemsInOldShards` metric reads 0 with every writer on the new count;
   * then remove this setting.
   * @default - none: nothing to migrate
   */
  readonly previousDueShards?: number;
  /**
   * Workers a tick fans out to, 1 to dueShards. With more than one, the scheduled function
   * becomes a dispatcher that starts a worker function (reserved concurrency = workers) per
   * share of the due index; see the scaling docs.
   * @default 1 - the scheduled function does the whole tick
   */
  readonly workers?: number;
  /**
   * Channels one tick (or each worker) processes at once, 1 to 64.
   * @default 8
   */
  readonly channelConcurrency?: number;
  /**
   * Largest segment message body, and the segment queue's MaximumMessageSize.
   * @default 262144
   */
  readonly maxBodyBytes?: number;
  /**
   * Days a chat message is kept after its platform time (DynamoDB TTL on the messages table), 1
   * to 36500: an import of old chat does not live longer than chat written today.
   * @default - kept until deleted
   */
  readonly messageRetentionDays?: number;
  /**
   * Days a result and its topic entries are kept after their segment's first message, at most
   * messageRetentionDays (a result never outlives the messages it cites); window replies keep
   * their 15 days or this, the shorter.
   * @default - messageRetentionDays: kept until deleted when that is unset
   */
  readonly resultRetentionDays?: number;
  /**
   * Retention of the functions' log groups, a CloudWatch Logs value such as 30 or 365.
   * @default 30
   */
  readonly logRetentionDays?: number;
  /**
   * Subscribes this address to the alarm topic.
   * @default - no subscription
   */
  readonly alarmEmail?: string;
  /**
   * Ingestion functions at once on the ingest queue (the event source's maximum concurrency,
   * 2 to 1000): a flood of producers waits in the queue instead of running up writes.
   * @default 4
   */
  readonly ingestConcurrency?: number;
  /**
   * Most chat messages in one direct invocation of the ingestion function, 1 to 10000; a larger
   * batch is refused whole.
   * @default 500
   */
  readonly ingestMaxBatch?: number;
  /**
   * A ceiling on each table's on-demand reads (read request units a second); requests over it
   * are throttled and retried, instead of billed.
   * @default - none
   */
  readonly tableMaxReadUnits?: number;
  /**
   * A ceiling on each table's on-demand writes (write request units a second).
   * @default - none
   */
  readonly tableMaxWriteUnits?: number;
  /**
   * Role ARNs besides the tick's (and the ingestion and extraction functions', which ask for
   * re-extractions) that may send to the segment queue, for operators who redrive its
   * dead-letter queue.
   * @default - none: only the tick sends
   */
  readonly segmentQueueSenders?: readonly string[];
  /**
   * `retain` keeps the tables, with deletion protection, when the stack is deleted.
   * @default "retain"
   */
  readonly dataRemovalPolicy?: "retain" | "destroy";
  /**
   * The extraction function's model service: `bedrock`, or an OpenAI-compatible `openai`.
   * @default "bedrock"
   */
  readonly extractor?: ExtractorSetting;
  /**
   * The Bedrock model id, or a cross-region inference profile id (`us.amazon.nova-lite-v1:0`);
   * with `openai`, the endpoint's model name (required then).
   * @default "amazon.nova-lite-v1:0"
   */
  readonly modelId?: string;
  /**
   * How a segment is cut into windows for the model. This and the window settings below default
   * to the function's own defaults (`EXTRACT_DEFAULTS`: ROUTE, WINDOW_SIZE, …).
   * @default "sliding"
   */
  readonly route?: Route;
  /**
   * The `sliding` route's window, in turns, 1 to 1000.
   * @default 60
   */
  readonly windowSize?: number;
  /**
   * Turns the `sliding` route's windows share, less than windowSize.
   * @default 6
   */
  readonly overlap?: number;
  /**
   * The `prefix` and `non_prefix` routes' step, in user turns, 1 to 1000.
   * @default 5
   */
  readonly prefixStep?: number;
  /**
   * Windows kept per segment on the `prefix` and `non_prefix` routes (the last ones), 1 to 1000.
   * @default 8
   */
  readonly maxWindows?: number;
  /**
   * Model calls one extraction makes at once, 1 to 32.
   * @default 4
   */
  readonly llmConcurrency?: number;
  /**
   * The longest one model call may take in all, its retries and the reading of the reply
   * included (both model services), from 1s to less than 14m 30s (Lambda's 15 minutes less the
   * extraction function's margin): a stalled or trickling endpoint fails there, named, and the
   * segment is retried. The extraction function's timeout is sized from it.
   * @default "2m"
   */
  readonly llmDeadline?: DurationSetting;
  /**
   * The output-token limit of every model call (both model services), 256 to 65536: a ceiling
   * on what one reply can cost and hold.
   * @default 4096
   */
  readonly maxOutputTokens?: number;
  /**
   * Characters of one message's text a prompt shows, 200 to 400000; longer texts are cut and
   * counted in the result (`trimmed.turnTexts`).
   * @default 4000
   */
  readonly maxTurnChars?: number;
  /**
   * How Bedrock is asked for JSON: `tool` (every Converse model with tool use) or `json_schema`.
   * @default "tool"
   */
  readonly bedrockOutput?: "json_schema" | "tool";
  /**
   * Extraction functions running at once (the segment queue event source's maximum concurrency,
   * 2 to 1000): with llmConcurrency, the deployment's rate limit on the model.
   * @default 2
   */
  readonly extractConcurrency?: number;
  /**
   * Input and output tokens extraction may spend per UTC day, all channels together, 1000 to a
   * trillion: once reached, segments wait (no model call) until the next day or until it is
   * raised, and the `TokenBudgetReached` alarm fires.
   * @default 10000000
   */
  readonly dailyTokenBudget?: number;
  /**
   * Input and output tokens one channel may spend per UTC day, 1000 to dailyTokenBudget.
   * @default - none: only dailyTokenBudget
   */
  readonly channelDailyTokenBudget?: number;
  /**
   * Failed attempts at a segment before the extraction function moves it to the segment DLQ, 1
   * to 100; waits (a budget pause, the breaker open, a busy segment) are not attempts. With the
   * backoff (30 s doubling to an hour) the default rides out about 9 hours of provider outage.
   * @default 16
   */
  readonly extractMaxAttempts?: number;
  /**
   * Provider failures in a row (throttled past the retries, 5xx, timeouts, unreachable,
   * 401/403) after which the extraction function stops calling the model for breakerCooldown,
   * 1 to 100: segments wait instead of hammering a dead endpoint.
   * @default 5
   */
  readonly breakerFailures?: number;
  /**
   * How long the circuit breaker stays open before a call may try again, 10s to 1h.
   * @default "5m"
   */
  readonly breakerCooldown?: DurationSetting;
  /**
   * The `TokenSpendHourly` alarm fires on an hour's spend that would use dailyTokenBudget in
   * this many hours, 1 to 24.
   * @default 8
   */
  readonly tokenPaceHours?: number;
  /**
   * The `TokenSpendDaily` alarm fires on 24 hours' spend past this share of dailyTokenBudget,
   * more than 0 and at most 1.
   * @default 0.8
   */
  readonly dailySpendShare?: number;
  /**
   * The `ExtractionFailureRate` alarm fires when more than this share of extraction attempts in
   * 15 minutes failed, more than 0 and less than 1.
   * @default 0.5
   */
  readonly extractFailureRate?: number;
  /**
   * The share of a segment's messages edited or deleted after its extraction past which it is
   * extracted again without them, 0 to 1: 0 on every change, 1 never (a change is always
   * redacted from the results; docs/extraction.md).
   * @default 0.25
   */
  readonly reextractChangedShare?: number;
  /**
   * Show system messages (joins, parts, topic changes, pins: `kind: system`) to the model too.
   * Off, they are stored, segmented and in each result's messages, but no prompt shows them.
   * Turning it on re-extracts segments as they are delivered again (it is part of the results'
   * prompt version).
   * @default false
   */
  readonly showSystemMessages?: boolean;
  /**
   * The OpenAI-compatible endpoint, `https://…` (required with `openai`).
   * @default - none
   */
  readonly openaiBaseUrl?: string;
  /**
   * Where the endpoint's API key is kept, never the key itself; with `openai`, exactly one: a
   * Secrets Manager secret's full ARN, or the name of an SSM SecureString parameter. Either in the
   * stack's region (the function reads it there at cold start), encrypted with the AWS managed
   * key or a customer key whose key policy lets the extraction role decrypt: the stack grants
   * the read of that one secret or parameter, no KMS key.
   * @default - none
   */
  readonly openaiApiKeySecret?: string;
  /** @default - none */
  readonly openaiApiKeyParameter?: string;
  /**
   * USD per million input and output tokens, for the dashboard's cost estimate. The defaults
   * are Amazon Nova Lite's published Bedrock on-demand prices (us-east-1); set yours for another
   * model, region or endpoint.
   * @default 0.06
   */
  readonly inputTokenPrice?: number;
  /** @default 0.24 */
  readonly outputTokenPrice?: number;
  /**
   * Physical names.
   * @default - generated by CloudFormation
   */
  readonly messagesTableName?: string;
  /** @default - generated by CloudFormation */
  readonly channelsTableName?: string;
  /** @default - generated by CloudFormation */
  readonly conversationsTableName?: string;
  /** @default - generated by CloudFormation */
  readonly resultsTableName?: string;
  /** @default - generated by CloudFormation */
  readonly segmentQueueName?: string;
  /** @default - generated by CloudFormation */
  readonly ingestQueueName?: string;
  /** @default - generated by CloudFormation */
  readonly dashboardName?: string;
  /**
   * The Slack Events API connector (docs/connectors.md): the full ARN of the Secrets Manager
   * secret holding the Slack app's signing secret (a plain string), never the secret itself.
   * Set, the stack deploys the receiver and its Function URL; unset, nothing of it.
   * @default - none: no Slack connector
   */
  readonly slackSigningSecret?: string;
  /**
   * With the Slack connector, the ARN of a secret holding the app's bot token (`xoxb-…`, scope
   * `users:read`): authors and mentions are named through users.info, cached an hour.
   * @default - none: Slack users stay their ids
   */
  readonly slackBotTokenSecret?: string;
  /**
   * The Telegram webhook connector (docs/connectors.md): the full ARN of the Secrets Manager
   * secret holding the `secret_token` given to setWebhook (a plain string), never the token.
   * Set, the stack deploys the receiver and its Function URL; unset, nothing of it.
   * @default - none: no Telegram connector
   */
  readonly telegramSecretToken?: string;
  /**
   * The Discord poller (docs/connectors.md): the channel ids it polls, comma-separated (text,
   * announcement or forum channels, with their threads). Unset, no poller is deployed.
   * @default - none
   */
  readonly discordChannels?: string;
  /**
   * The Secrets Manager secret's full ARN that holds the Discord bot token (required with
   * `discordChannels`), never the token itself.
   * @default - none
   */
  readonly discordTokenSecret?: string;
  /**
   * How often the Discord poller runs: whole minutes, 1m to 60m.
   * @default "5m"
   */
  readonly discordSchedule?: DurationSetting;
  /**
   * Latest messages per channel the poller re-reads each run for edits and deletions, 0 to 1000
   * (0: none).
   * @default 200
   */
  readonly discordRereadWindow?: number;
  /**
   * Where a channel's first poll starts, an ISO-8601 date-time with a zone; unset, at the first
   * run (no history).
   * @default - none
   */
  readonly discordBackfillFrom?: string;
  /**
   * Deploy the read API (docs/api.md): an API Gateway HTTP API, IAM-authorized (SigV4) unless
   * apiJwtIssuer names a JWT issuer.
   * @default false
   */
  readonly api?: boolean;
  /**
   * A JWT authorizer's issuer (an https URL) in place of IAM: Cognito's, Auth0's, your IdP's.
   * @default - none: IAM authorization
   */
  readonly apiJwtIssuer?: string;
  /**
   * The audiences (client ids) a JWT must carry, comma-separated; required with apiJwtIssuer.
   * @default - none
   */
  readonly apiJwtAudience?: string;
  /**
   * Deploy the scheduled digest (docs/digest-schedule.md): on `digestSchedule`, the digest of the
   * last `digestPeriod` written to an S3 bucket, posted to Slack with digestSlackWebhookSecret
   * and published to digestSnsTopic. `false` deploys neither the bucket nor the function.
   * @default true
   */
  readonly digest?: boolean;
  /**
   * When the digest runs: an EventBridge `cron(...)` or `rate(...)` expression, in UTC.
   * @default "cron(0 8 ? * MON *)"
   */
  readonly digestSchedule?: string;
  /**
   * The period a digest covers, ending at the start of the day it runs (UTC), 1d to 31d.
   * @default "7d"
   */
  readonly digestPeriod?: DurationSetting;
  /**
   * The channels a digest covers, comma-separated ids; unset, every channel of the channels table.
   * @default - every channel
   */
  readonly digestChannels?: string;
  /**
   * A Secrets Manager secret's full ARN holding a Slack incoming webhook URL: each digest is
   * posted there too.
   * @default - none: not posted
   */
  readonly digestSlackWebhookSecret?: string;
  /**
   * A standard (not FIFO) SNS topic's ARN: each digest's Markdown is published there too (email,
   * SQS or chat subscribers), cut to SNS's 256 KB. A topic encrypted with a customer-managed KMS
   * key must let the digest function's role use that key.
   * @default - none: not published
   */
  readonly digestSnsTopic?: string;
}

export type SettingName = keyof ConvosegSettings;

/** Each setting's value once read and checked: durations in milliseconds, absent ones undefined. */
export interface SettingValues {
  maxSize: number;
  minItems: number;
  settle: number;
  grace: number;
  schedule: number;
  budgetMargin: number;
  queueType: QueueType;
  maxBodyBytes: number;
  dueShards: number;
  previousDueShards: number | null;
  workers: number;
  channelConcurrency: number;
  messageRetentionDays: number | null;
  resultRetentionDays: number | null;
  logRetentionDays: number;
  segmentQueueName: string | undefined;
  extractor: ExtractorSetting;
  modelId: string;
  route: Route;
  windowSize: number;
  overlap: number;
  prefixStep: number;
  maxWindows: number;
  llmConcurrency: number;
  llmDeadline: number;
  maxOutputTokens: number;
  maxTurnChars: number;
  bedrockOutput: "json_schema" | "tool";
  extractConcurrency: number;
  dailyTokenBudget: number;
  channelDailyTokenBudget: number | null;
  extractMaxAttempts: number;
  breakerFailures: number;
  breakerCooldown: number;
  tokenPaceHours: number;
  dailySpendShare: number;
  extractFailureRate: number;
  reextractChangedShare: number;
  showSystemMessages: boolean;
  openaiBaseUrl: string | undefined;
  openaiApiKeySecret: string | undefined;
  openaiApiKeyParameter: string | undefined;
  inputTokenPrice: number;
  outputTokenPrice: number;
  messagesTableName: string | undefined;
  channelsTableName: string | undefined;
  conversationsTableName: string | undefined;
  resultsTableName: string | undefined;
  ingestQueueName: string | undefined;
  dashboardName: string | undefined;
  alarmEmail: string | undefined;
  ingestConcurrency: number;
  ingestMaxBatch: number;
  tableMaxReadUnits: number | null;
  tableMaxWriteUnits: number | null;
  segmentQueueSenders: string[];
  dataRemovalPolicy: "retain" | "destroy";
  slackSigningSecret: string | undefined;
  slackBotTokenSecret: string | undefined;
  telegramSecretToken: string | undefined;
  discordChannels: string | undefined;
  discordTokenSecret: string | undefined;
  discordSchedule: number;
  discordRereadWindow: number;
  discordBackfillFrom: string | undefined;
  api: boolean;
  apiJwtIssuer: string | undefined;
  apiJwtAudience: string | undefined;
  digest: boolean;
  digestSchedule: string;
  digestPeriod: number;
  digestChannels: string | undefined;
  digestSlackWebhookSecret: string | undefined;
  digestSnsTopic: string | undefined;
}

/** What is wrong with a value: the setting's own (or, for a rule over several, `setting`'s). */
export class SettingProblem extends Error {
  override readonly name: string = "SettingProblem";
  constructor(
    problem: string,
    readonly setting?: SettingName,
  ) {
    super(problem);
  }
}

/** How a setting's value is read: the docs' defaults are compared by kind. */
export type SettingKind =
  | "integer"
  | "duration"
  | "choice"
  | "text"
  | "price"
  | "fraction"
  | "flag"
  | "roleArns";

/** One row of the table. */
export interface Setting<N extends SettingName = SettingName> {
  readonly name: N;
  readonly kind: SettingKind;
  /** The default as CDK context would give it (`"24h"`, `"500"`); undefined: none. */
  readonly default?: string | number;
  /**
   * Reads the given value (undefined when neither props nor context set it) with the values of
   * the settings above it in the table; throws a {@link SettingProblem}.
   */
  readonly read: (given: unknown, earlier: SettingValues) => SettingValues[N];
  /** Rules over this value and those above it, run once it is read; throws a SettingProblem. */
  readonly check?: (values: SettingValues) => void;
}

export const LAMBDA_MAX_TIMEOUT_MS = 15 * 60_000;
/** The extraction function's time besides model calls: reads, lease, results, a cold start. */
export const EXTRACT_MARGIN_MS = 30_000;
/** Amazon Nova Lite's published on-demand prices in us-east-1, USD per million tokens. */
const NOVA_LITE_PRICES = { input: 0.06, output: 0.24 };
/** The segment function's own bound on maxSize and minItems. */
const MAX_SEGMENT_MESSAGES = 100_000;
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
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
const TABLE_RULE = "3-255 letters, digits, _ . -";
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
/** Standard topics only: a `.fifo` name does not match, since Publish to one needs a group id. */
const SNS_TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/;
/** An SSM parameter name (not an ARN); hierarchical names start with `/`. */
const PARAMETER_NAME = /^(?!\/?(aws|ssm))(?:[A-Za-z0-9_.-]+|(?:\/[A-Za-z0-9_.-]+)+)$/i;
const MAX_PARAMETER_NAME = 1011;
/** `readExtractConfig`'s bounds, so that resolveConfig names them first (the cross-check agrees). */
const MAX_WINDOW_TURNS = EXTRACT_BOUNDS.windowTurns.max;
const MAX_WINDOWS = 1000;
const MAX_LLM_CONCURRENCY = 32;
/** The SQS event source's maximum concurrency (Lambda allows 2 to 1000). */
/** Lambda's bounds on an SQS event source's maximum concurrency. */
const MIN_EXTRACT_CONCURRENCY = 2;
const MAX_EXTRACT_CONCURRENCY = 1000;
/** `readExtractConfig`'s bounds on the token budgets and the attempts. */
const MIN_TOKEN_BUDGET = 1000;
const MAX_TOKEN_BUDGET = 1_000_000_000_000;
const MAX_EXTRACT_ATTEMPTS = 100;
/** Well above any model's list price: a larger number is a price per thousand taken for a million. */
const MAX_TOKEN_PRICE = 1000;
const PRICE = /^\d+(\.\d+)?$/;

/**
 * The tick's timeout for a schedule period: the period less a gap (a tenth, at least 10 s) so
 * that a tick ends before the next starts, capped at Lambda's 15 minutes.
 */
export function tickTimeoutMs(scheduleMs: number): number {
  return Math.min(LAMBDA_MAX_TIMEOUT_MS, scheduleMs - Math.max(10_000, scheduleMs / 10));
}

const got = (value: unknown) => `(got ${JSON.stringify(value)})`;
const fail = (problem: string, setting?: SettingName): never => {
  throw new SettingProblem(problem, setting);
};

// The kinds of setting. A problem a check throws names the row's setting unless it names another.

type Check = (values: SettingValues) => void;

function integer<N extends SettingName>(
  name: N,
  fallback: string,
  min: number,
  max?: number,
  check?: Check,
): Setting<N> {
  return {
    name,
    kind: "integer",
    default: fallback,
    check,
    read: (given) => {
      const text = String(given ?? fallback);
      const n = Number(text);
      if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min || n > (max ?? n)) {
        const range = max === undefined ? `>= ${min}` : `from ${min} to ${max}`;
        fail(`must be an integer ${range} ${got(given)}`);
      }
      return n as SettingValues[N];
    },
  };
}

/** An integer with no default: null when not given. */
function optionalInteger<N extends SettingName>(name: N, min: number, max: number): Setting<N> {
  const { read } = integer(name, "", min, max);
  return {
    name,
    kind: "integer",
    read: (given, earlier) =>
      (given === undefined ? null : read(given, earlier)) as SettingValues[N],
  };
}

function duration<N extends SettingName>(name: N, fallback: string, check?: Check): Setting<N> {
  return {
    name,
    kind: "duration",
    default: fallback,
    check,
    read: (given) => {
      const text = given === undefined ? fallback : given;
      if (typeof text !== "string" && typeof text !== "number") {
        return fail(`must be a duration such as 90s, 15m or 24h ${got(text)}`);
      }
      try {
        return parseDuration(String(text), name) as SettingValues[N];
      } catch (error) {
        return fail((error as Error).message.replace(`${name} `, ""));
      }
    },
  };
}

function choice<N extends SettingName>(
  name: N,
  options: readonly SettingValues[N][],
  fallback: SettingValues[N],
): Setting<N> {
  return {
    name,
    kind: "choice",
    default: String(fallback),
    read: (given) => {
      if (given === undefined) return fallback;
      if (!options.includes(given as SettingValues[N])) {
        const allowed = options.length > 2 ? `one of ${options.join(", ")}` : options.join(" or ");
        fail(`must be ${allowed} ${got(given)}`);
      }
      return given as SettingValues[N];
    },
  };
}

/** What a text setting must match. */
interface TextRule {
  pattern: RegExp;
  rule: string;
  /** The value may be a key given by mistake: it is not echoed. */
  secret?: boolean;
}

/** A string matching a rule, which may depend on the settings above; no default unless given. */
function text<N extends SettingName>(
  name: N,
  rule: TextRule | ((earlier: SettingValues) => TextRule),
  options: {
    default?: string;
    fallback?: (earlier: SettingValues) => SettingValues[N];
    check?: Check;
  } = {},
): Setting<N> {
  return {
    name,
    kind: "text",
    default: options.default,
    check: options.check,
    read: (given, earlier) => {
      if (given === undefined) return options.fallback?.(earlier) as SettingValues[N];
      const { pattern, rule: what, secret } = typeof rule === "function" ? rule(earlier) : rule;
      if (typeof given !== "string" || !pattern.test(given)) {
        fail(secret ? `must be ${what} (the value is not shown)` : `must be ${what} ${got(given)}`);
      }
      return given as SettingValues[N];
    },
  };
}

/** USD per million tokens: a non-negative number (a decimal string from the command line). */
function price<N extends SettingName>(name: N, fallback: number): Setting<N> {
  return {
    name,
    kind: "price",
    default: fallback,
    read: (given) => {
      if (given === undefined) return fallback as SettingValues[N];
      const n = typeof given === "number" ? given : PRICE.test(String(given)) ? Number(given) : NaN;
      if (!Number.isFinite(n) || n < 0 || n > MAX_TOKEN_PRICE) {
        fail(`must be USD per million tokens, from 0 to ${MAX_TOKEN_PRICE} ${got(given)}`);
      }
      return n as SettingValues[N];
    },
  };
}

/**
 * A share, a decimal string from the command line: above 0 (from 0 with `range.zero`) and up to 1
 * (below 1 without `range.one`).
 */
function fraction<N extends SettingName>(
  name: N,
  fallback: number,
  range: { zero: boolean; one: boolean },
): Setting<N> {
  return {
    name,
    kind: "fraction",
    default: fallback,
    read: (given) => {
      if (given === undefined) return fallback as SettingValues[N];
      const n = typeof given === "number" ? given : PRICE.test(String(given)) ? Number(given) : NaN;
      const low = range.zero ? n >= 0 : n > 0;
      const high = range.one ? n <= 1 : n < 1;
      if (!(low && high)) {
        const from = range.zero ? "from 0" : "above 0";
        const to = range.one ? "at most 1" : "below 1";
        fail(`must be a share ${from} and ${to}, such as 0.5 ${got(given)}`);
      }
      return n as SettingValues[N];
    },
  };
}

/** On or off: a boolean in props, `true` or `false` in CDK context. */
function flag<N extends SettingName>(name: N, fallback: boolean): Setting<N> {
  return {
    name,
    kind: "flag",
    default: String(fallback),
    read: (given) => {
      if (given === undefined) return fallback as SettingValues[N];
      if (given === true || given === "true") return true as SettingValues[N];
      if (given === false || given === "false") return false as SettingValues[N];
      return fail(`must be true or false ${got(given)}`);
    },
  };
}

/** A list of IAM role ARNs: an array in props, comma-separated in CDK context. */
function roleArns<N extends SettingName>(name: N): Setting<N> {
  return {
    name,
    kind: "roleArns",
    read: (given) => {
      if (given === undefined) return [] as unknown as SettingValues[N];
      const list = typeof given === "string" ? given.split(",").map((v) => v.trim()) : given;
      if (!Array.isArray(list) || !list.every((v) => typeof v === "string" && ROLE_ARN.test(v))) {
        fail(`must be IAM role ARNs (arn:aws:iam::<account>:role/<name>) ${got(given)}`);
      }
      return [...(list as string[])] as SettingValues[N];
    },
  };
}

const tableName = <N extends SettingName>(name: N) =>
  text(name, { pattern: TABLE_NAME, rule: TABLE_RULE });

/**
 * With `openai`, its endpoint and exactly one place for the key; without, none of them. Run once
 * the three are read: a problem names the setting at fault, the first in this order.
 */
const openaiEndpoint: Check = (values) => {
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
    if (value !== undefined) fail("applies only when extractor is openai", name as SettingName);
  }
};

/**
 * Every setting, in the order they are read: a setting's checks see the settings above it. The
 * order is also which of several bad settings is reported.
 */
export const SETTINGS: readonly Setting[] = [
  integer("maxSize", SEGMENT_DEFAULTS.MAX_SIZE, 1, MAX_SEGMENT_MESSAGES),
  integer("minItems", SEGMENT_DEFAULTS.MIN_ITEMS, 1, MAX_SEGMENT_MESSAGES, (v) => {
    if (v.minItems > v.maxSize) fail(`must not exceed maxSize (${v.maxSize}) ${got(v.minItems)}`);
  }),
  duration("settle", SEGMENT_DEFAULTS.SETTLE),
  duration("grace", SEGMENT_DEFAULTS.GRACE),
  duration("schedule", "5m", ({ schedule: ms }) => {
    if (ms % MINUTE_MS !== 0 || ms < MINUTE_MS || ms > 60 * MINUTE_MS) {
      fail(`must be whole minutes from 1m to 60m (EventBridge rates) ${got(ms)}`);
    }
  }),
  duration("budgetMargin", SEGMENT_DEFAULTS.BUDGET_MARGIN, ({ budgetMargin: ms, schedule }) => {
    const timeout = tickTimeoutMs(schedule);
    if (ms >= timeout) fail(`must be less than the tick timeout (${timeout} ms) ${got(ms)}`);
  }),
  choice("queueType", ["fifo", "standard"], "fifo"),
  integer("maxBodyBytes", SEGMENT_DEFAULTS.MAX_BODY_BYTES, MIN_BODY_BYTES, MAX_BODY_BYTES),
  integer("dueShards", SEGMENT_DEFAULTS.DUE_SHARDS, 1, MAX_DUE_SHARDS),
  optionalInteger("previousDueShards", 1, MAX_DUE_SHARDS),
  integer("workers", SEGMENT_DEFAULTS.WORKERS, 1, MAX_WORKERS, ({ workers: n, dueShards }) => {
    if (n > dueShards) {
      fail(
        `must not exceed dueShards (${dueShards}): each worker owns at least one shard ${got(n)}`,
      );
    }
  }),
  integer("channelConcurrency", SEGMENT_DEFAULTS.CHANNEL_CONCURRENCY, 1, MAX_CHANNEL_CONCURRENCY),
  optionalInteger("messageRetentionDays", 1, MAX_RETENTION_DAYS),
  {
    ...optionalInteger("resultRetentionDays", 1, MAX_RETENTION_DAYS),
    // Refused rather than clamped: a result kept past its messages would cite what is gone.
    check: ({ resultRetentionDays: days, messageRetentionDays: messages }) => {
      if (days !== null && messages !== null && days > messages) {
        fail(
          `must not exceed messageRetentionDays (${messages}): a result must not outlive the messages it cites ${got(days)}`,
        );
      }
    },
  },
  integer("logRetentionDays", "30", 1, undefined, ({ logRetentionDays: days }) => {
    if (!LOG_RETENTION_DAYS.has(days)) {
      fail(`must be one of ${[...LOG_RETENTION_DAYS].join(", ")} ${got(days)}`);
    }
  }),
  text("segmentQueueName", ({ queueType }) =>
    queueType === "fifo"
      ? {
          pattern: FIFO_QUEUE_NAME,
          rule: "1-71 letters, digits, _ - and .fifo (queueType is fifo)",
        }
      : { pattern: QUEUE_NAME, rule: "1-71 letters, digits, _ - (queueType is standard)" },
  ),
  choice("extractor", ["bedrock", "openai"], "bedrock"),
  text(
    "modelId",
    ({ extractor }) =>
      extractor === "openai"
        ? { pattern: OPENAI_MODEL, rule: "the endpoint's model name (no spaces)" }
        : {
            pattern: BEDROCK_MODEL_ID,
            rule: "a Bedrock model id or inference profile id such as amazon.nova-lite-v1:0 (no wildcard or ARN)",
          },
    {
      default: DEFAULT_BEDROCK_MODEL_ID,
      // An OpenAI-compatible endpoint has no default model.
      fallback: ({ extractor }) =>
        extractor === "openai"
          ? fail("must be set when extractor is openai")
          : DEFAULT_BEDROCK_MODEL_ID,
    },
  ),
  choice("route", ROUTES, EXTRACT_DEFAULTS.ROUTE),
  integer("windowSize", EXTRACT_DEFAULTS.WINDOW_SIZE, 1, MAX_WINDOW_TURNS),
  integer("overlap", EXTRACT_DEFAULTS.OVERLAP, 0, MAX_WINDOW_TURNS - 1, (v) => {
    const problem = overlapProblem(v.windowSize, v.overlap);
    if (problem !== undefined) fail(problem);
  }),
  integer("prefixStep", EXTRACT_DEFAULTS.PREFIX_STEP, 1, MAX_WINDOW_TURNS),
  integer("maxWindows", EXTRACT_DEFAULTS.MAX_WINDOWS, 1, MAX_WINDOWS),
  integer("llmConcurrency", EXTRACT_DEFAULTS.LLM_CONCURRENCY, 1, MAX_LLM_CONCURRENCY),
  duration("llmDeadline", EXTRACT_DEFAULTS.LLM_DEADLINE, ({ llmDeadline: ms }) => {
    // A call must end before the function's timeout less the margin, or it ends in a timeout.
    const { min } = EXTRACT_BOUNDS.llmDeadlineMs;
    const below = LAMBDA_MAX_TIMEOUT_MS - EXTRACT_MARGIN_MS;
    if (ms < min || ms >= below) {
      fail(
        `must be from ${min} ms to less than ${below} ms (Lambda's 15 minutes less the extraction function's ${EXTRACT_MARGIN_MS} ms margin) ${got(ms)}`,
      );
    }
  }),
  integer(
    "maxOutputTokens",
    EXTRACT_DEFAULTS.MAX_OUTPUT_TOKENS,
    EXTRACT_BOUNDS.outputTokens.min,
    EXTRACT_BOUNDS.outputTokens.max,
  ),
  integer(
    "maxTurnChars",
    EXTRACT_DEFAULTS.MAX_TURN_CHARS,
    EXTRACT_BOUNDS.turnChars.min,
    EXTRACT_BOUNDS.turnChars.max,
  ),
  choice("bedrockOutput", ["json_schema", "tool"], EXTRACT_DEFAULTS.BEDROCK_OUTPUT),
  integer(
    "extractConcurrency",
    String(MIN_EXTRACT_CONCURRENCY),
    MIN_EXTRACT_CONCURRENCY,
    MAX_EXTRACT_CONCURRENCY,
  ),
  integer(
    "dailyTokenBudget",
    EXTRACT_DEFAULTS.DAILY_TOKEN_BUDGET,
    MIN_TOKEN_BUDGET,
    MAX_TOKEN_BUDGET,
  ),
  {
    ...optionalInteger("channelDailyTokenBudget", MIN_TOKEN_BUDGET, MAX_TOKEN_BUDGET),
    check: ({ channelDailyTokenBudget: n, dailyTokenBudget }) => {
      if (n !== null && n > dailyTokenBudget) {
        fail(`must not exceed dailyTokenBudget (${dailyTokenBudget}) ${got(n)}`);
      }
    },
  },
  integer("extractMaxAttempts", EXTRACT_DEFAULTS.MAX_ATTEMPTS, 1, MAX_EXTRACT_ATTEMPTS),
  integer(
    "breakerFailures",
    EXTRACT_DEFAULTS.BREAKER_FAILURES,
    EXTRACT_BOUNDS.breakerFailures.min,
    EXTRACT_BOUNDS.breakerFailures.max,
  ),
  duration("breakerCooldown", EXTRACT_DEFAULTS.BREAKER_COOLDOWN, ({ breakerCooldown: ms }) => {
    const { min, max } = EXTRACT_BOUNDS.breakerCooldownMs;
    if (ms < min || ms > max) fail(`must be from ${min} ms to ${max} ms ${got(ms)}`);
  }),
  integer("tokenPaceHours", "8", 1, 24),
  fraction("dailySpendShare", 0.8, { zero: false, one: true }),
  fraction("extractFailureRate", 0.5, { zero: false, one: false }),
  fraction("reextractChangedShare", Number(EXTRACT_DEFAULTS.REEXTRACT_CHANGED_SHARE), {
    zero: true,
    one: true,
  }),
  flag("showSystemMessages", (EXTRACT_DEFAULTS.SHOW_SYSTEM_MESSAGES as string) === "true"),
  text("openaiBaseUrl", { pattern: HTTPS_URL, rule: "an https:// URL" }),
  // Where the key is kept, never the key: a value that is neither is not echoed (it may be one).
  text("openaiApiKeySecret", {
    pattern: SECRET_ARN,
    rule: "a Secrets Manager secret's full ARN, not the key itself",
    secret: true,
  }),
  text(
    "openaiApiKeyParameter",
    {
      pattern: PARAMETER_NAME,
      rule: "an SSM parameter name such as /convoseg/openai-api-key, not starting with aws or ssm (not an ARN, not the key itself)",
      secret: true,
    },
    {
      check: (values) => {
        const parameter = values.openaiApiKeyParameter;
        if (parameter !== undefined && parameter.length > MAX_PARAMETER_NAME) {
          fail(`must be at most ${MAX_PARAMETER_NAME} characters`);
        }
        openaiEndpoint(values);
      },
    },
  ),
  price("inputTokenPrice", NOVA_LITE_PRICES.input),
  price("outputTokenPrice", NOVA_LITE_PRICES.output),
  tableName("messagesTableName"),
  tableName("channelsTableName"),
  tableName("conversationsTableName"),
  tableName("resultsTableName"),
  text("ingestQueueName", { pattern: QUEUE_NAME, rule: "1-71 letters, digits, _ -" }),
  text("dashboardName", { pattern: DASHBOARD_NAME, rule: "1-255 letters, digits, _ -" }),
  text("alarmEmail", { pattern: EMAIL, rule: "an email address" }),
  integer("ingestConcurrency", "4", MIN_EXTRACT_CONCURRENCY, MAX_EXTRACT_CONCURRENCY),
  integer("ingestMaxBatch", String(DEFAULT_MAX_BATCH), 1, MAX_BATCH_LIMIT),
  optionalInteger("tableMaxReadUnits", 1, MAX_TABLE_UNITS),
  optionalInteger("tableMaxWriteUnits", 1, MAX_TABLE_UNITS),
  roleArns("segmentQueueSenders"),
  choice("dataRemovalPolicy", ["retain", "destroy"], "retain"),
  // Where the signing secret is kept, never the secret: a value that is neither is not echoed.
  text("slackSigningSecret", {
    pattern: SECRET_ARN,
    rule: "a Secrets Manager secret's full ARN, not the signing secret itself",
    secret: true,
  }),
  text(
    "slackBotTokenSecret",
    {
      pattern: SECRET_ARN,
      rule: "a Secrets Manager secret's full ARN, not the bot token itself",
      secret: true,
    },
    {
      check: ({ slackBotTokenSecret, slackSigningSecret }) => {
        if (slackBotTokenSecret !== undefined && slackSigningSecret === undefined) {
          fail("is for the Slack connector: set slackSigningSecret too");
        }
      },
    },
  ),
  text("telegramSecretToken", {
    pattern: SECRET_ARN,
    rule: "a Secrets Manager secret's full ARN, not the secret token itself",
    secret: true,
  }),
  text("discordChannels", {
    pattern: DISCORD_CHANNELS,
    rule: `1 to ${MAX_DISCORD_CHANNELS} Discord channel ids (snowflakes), comma-separated`,
  }),
  text(
    "discordTokenSecret",
    {
      pattern: SECRET_ARN,
      rule: "a Secrets Manager secret's full ARN, not the token itself",
      secret: true,
    },
    {
      check: ({ discordChannels, discordTokenSecret }) => {
        if (discordChannels !== undefined && discordTokenSecret === undefined) {
          fail("must be set when discordChannels is (the poller reads the bot token there)");
        }
        if (discordChannels === undefined && discordTokenSecret !== undefined) {
          fail(
            "is set without discordChannels: set the channels to poll, or neither",
            "discordTokenSecret",
          );
        }
      },
    },
  ),
  duration("discordSchedule", "5m", ({ discordSchedule: ms }) => {
    if (ms % MINUTE_MS !== 0 || ms < MINUTE_MS || ms > 60 * MINUTE_MS) {
      fail(`must be whole minutes from 1m to 60m (EventBridge rates) ${got(ms)}`);
    }
  }),
  integer("discordRereadWindow", String(DEFAULT_REREAD_WINDOW), 0, MAX_REREAD_WINDOW),
  text("discordBackfillFrom", {
    pattern: ISO_DATE_TIME,
    rule: "an ISO-8601 date-time with a zone, on or after 2015-01-01, such as 2025-06-01T00:00:00Z",
  }),
  flag("api", false),
  text(
    "apiJwtIssuer",
    { pattern: JWT_ISSUER, rule: "an https URL (the JWT issuer, its iss claim)" },
    {
      check: ({ api, apiJwtIssuer }) => {
        if (apiJwtIssuer !== undefined && !api) fail("is for the read API: set api=true too");
      },
    },
  ),
  text(
    "apiJwtAudience",
    { pattern: JWT_AUDIENCES, rule: "1 to 10 audiences (client ids), comma-separated" },
    {
      check: ({ apiJwtIssuer, apiJwtAudience }) => {
        if (apiJwtIssuer !== undefined && apiJwtAudience === undefined) {
          fail("must be set with apiJwtIssuer (the audiences a token must carry)");
        }
        if (apiJwtIssuer === undefined && apiJwtAudience !== undefined) {
          fail("is set without apiJwtIssuer: set the issuer too, or neither", "apiJwtAudience");
        }
      },
    },
  ),
  flag("digest", true),
  text(
    "digestSchedule",
    {
      pattern: SCHEDULE_EXPRESSION,
      rule: "an EventBridge schedule expression, such as cron(0 8 ? * MON *) or rate(7 days)",
    },
    { default: "cron(0 8 ? * MON *)", fallback: () => "cron(0 8 ? * MON *)" },
  ),
  duration("digestPeriod", "7d", ({ digestPeriod: ms }) => {
    if (ms % DAY_MS !== 0 || ms < DAY_MS || ms > 31 * DAY_MS) {
      fail(`must be whole days from 1d to 31d ${got(ms)}`);
    }
  }),
  text("digestChannels", {
    pattern: DIGEST_CHANNELS,
    rule: "1 to 100 channel ids, comma-separated, without whitespace",
  }),
  text(
    "digestSlackWebhookSecret",
    {
      pattern: SECRET_ARN,
      rule: "a Secrets Manager secret's full ARN, not the webhook URL itself",
      secret: true,
    },
    {
      check: ({ digest, digestSlackWebhookSecret }) => {
        if (digestSlackWebhookSecret !== undefined && !digest) {
          fail("is for the scheduled digest, which digest=false turns off");
        }
      },
    },
  ),
  text(
    "digestSnsTopic",
    {
      pattern: SNS_TOPIC_ARN,
      rule: "a standard SNS topic's ARN (arn:aws:sns:<region>:<account>:<name>); a FIFO topic would need a message group",
    },
    {
      check: ({ digest, digestSnsTopic }) => {
        if (digestSnsTopic !== undefined && !digest) {
          fail("is for the scheduled digest, which digest=false turns off");
        }
      },
    },
  ),
];
