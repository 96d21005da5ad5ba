import { RetentionDays } from "aws-cdk-lib/aws-logs";
import { KnowledgeConfigError } from "convoseg/knowledge";
import { EXTRACT_DEFAULTS, readExtractConfig } from "convoseg/knowledge/config";
import { readSegmentConfig, SEGMENT_DEFAULTS } from "convoseg/pipeline";
import { describe, expect, it } from "vitest";
import {
  bedrockModel,
  ConfigError,
  type ConvosegSettings,
  checkExtractEnvironment,
  type ExtractSizing,
  extractEnvironment,
  extractRounds,
  extractTimeoutMs,
  resolveConfig,
  type SettingName,
  segmentEnvironment,
  tickTimeoutMs,
} from "../../infra/config.js";

const noContext = () => undefined;
const SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:convoseg/openai-AbCdEf";
/** The extraction defaults the function itself has (`EXTRACT_DEFAULTS`), as numbers. */
const EXTRACT = {
  windowSize: Number(EXTRACT_DEFAULTS.WINDOW_SIZE),
  overlap: Number(EXTRACT_DEFAULTS.OVERLAP),
  prefixStep: Number(EXTRACT_DEFAULTS.PREFIX_STEP),
  maxWindows: Number(EXTRACT_DEFAULTS.MAX_WINDOWS),
  llmConcurrency: Number(EXTRACT_DEFAULTS.LLM_CONCURRENCY),
  llmDeadlineMs: 120_000,
  maxOutputTokens: Number(EXTRACT_DEFAULTS.MAX_OUTPUT_TOKENS),
  maxTurnChars: Number(EXTRACT_DEFAULTS.MAX_TURN_CHARS),
};
/**
 * The default extraction timeout: 500 messages in sliding windows, llmConcurrency at a time,
 * each window a call and a repair of up to 120 s, plus 30 s; at most 15 minutes.
 */
const DEFAULT_EXTRACT_TIMEOUT_MS = Math.min(
  15 * 60_000,
  Math.ceil(
    Math.ceil((500 - EXTRACT.overlap) / (EXTRACT.windowSize - EXTRACT.overlap)) /
      EXTRACT.llmConcurrency,
  ) *
    2 *
    120_000 +
    30_000,
);
const fromContext = (values: Record<string, unknown>) => (name: SettingName) => values[name];
const resolve = (props: ConvosegSettings, context: Record<string, unknown> = {}) =>
  resolveConfig(props, fromContext(context));

describe("resolveConfig", () => {
  it("defaults to the segmenter's own defaults, a 5-minute schedule and a FIFO queue", () => {
    expect(resolveConfig({}, noContext)).toEqual({
      maxSize: 500,
      settleMs: 24 * 3_600_000,
      minItems: 1,
      graceMs: 60_000,
      scheduleMinutes: 5,
      tickTimeoutMs: 270_000,
      budgetMarginMs: 20_000,
      fifo: true,
      maxBodyBytes: 256 * 1024,
      dueShards: 4,
      previousDueShards: null,
      workers: 1,
      channelConcurrency: 8,
      conversations: "linked",
      askLinks: false,
      logRetention: RetentionDays.ONE_MONTH,
      retention: { messageDays: null, resultDays: null },
      alarmEmail: undefined,
      segmentQueueSenders: [],
      retainData: true,
      ingest: {
        concurrency: 4,
        maxBatch: 500,
        producers: { channels: { prefixes: [""] }, changes: false },
      },
      tableMaxUnits: { read: null, write: null },
      extract: {
        extractor: "bedrock",
        modelId: "amazon.nova-lite-v1:0",
        route: EXTRACT_DEFAULTS.ROUTE,
        ...EXTRACT,
        bedrockOutput: EXTRACT_DEFAULTS.BEDROCK_OUTPUT,
        concurrency: 2,
        openaiBaseUrl: undefined,
        apiKey: undefined,
        timeoutMs: DEFAULT_EXTRACT_TIMEOUT_MS,
        dailyTokenBudget: 10_000_000,
        channelDailyTokenBudget: null,
        maxAttempts: 16,
        breaker: { failures: 5, cooldownMs: 300_000 },
        reextractChangedShare: 0.25,
        showSystemMessages: false,
        // Amazon Nova Lite's on-demand prices.
        inputTokenPrice: 0.06,
        outputTokenPrice: 0.24,
      },
      alarms: { tokenPaceHours: 8, dailySpendShare: 0.8, extractFailureRate: 0.5 },
      segmentVisibilityTimeoutMs: 6 * DEFAULT_EXTRACT_TIMEOUT_MS,
      connectors: { privateChats: false, receiverConcurrency: 5 },
      digest: { schedule: "cron(0 8 ? * MON *)", periodMs: 7 * 86_400_000, retentionDays: 90 },
      search: false,
      environments: expect.any(Object),
      names: {
        messagesTable: undefined,
        channelsTable: undefined,
        conversationsTable: undefined,
        resultsTable: undefined,
        segmentQueue: undefined,
        ingestQueue: undefined,
        dashboard: undefined,
      },
    });
  });

  it("reads every setting from CDK context, where the command line gives strings", () => {
    const config = resolve(
      {},
      {
        maxSize: "200",
        settle: "12h",
        minItems: "3",
        grace: "2m",
        schedule: "10m",
        budgetMargin: "45s",
        queueType: "standard",
        maxBodyBytes: "524288",
        dueShards: "16",
        previousDueShards: "4",
        workers: "8",
        channelConcurrency: "16",
        conversations: "contiguous",
        askLinks: "true",
        logRetentionDays: "90",
        messageRetentionDays: "90",
        resultRetentionDays: "30",
        alarmEmail: "ops@example.com",
        segmentQueueSenders:
          "arn:aws:iam::123456789012:role/ops, arn:aws:iam::123456789012:role/path/redrive",
        dataRemovalPolicy: "destroy",
        ingestConcurrency: "20",
        ingestMaxBatch: "100",
        producerChannels: "bots-*,ops",
        producerChanges: "true",
        tableMaxReadUnits: "4000",
        tableMaxWriteUnits: "1000",
        messagesTableName: "chat-messages",
        channelsTableName: "chat-channels",
        conversationsTableName: "agent-turns",
        resultsTableName: "chat-results",
        segmentQueueName: "segments",
        ingestQueueName: "chat-in",
        dashboardName: "chat-pipeline",
        extractor: "openai",
        modelId: "gpt-4o-mini",
        route: "prefix",
        windowSize: "30",
        overlap: "5",
        prefixStep: "4",
        maxWindows: "6",
        llmConcurrency: "8",
        llmDeadline: "90s",
        bedrockOutput: "json_schema",
        extractConcurrency: "10",
        dailyTokenBudget: "2000000",
        channelDailyTokenBudget: "50000",
        extractMaxAttempts: "20",
        breakerFailures: "3",
        breakerCooldown: "10m",
        tokenPaceHours: "4",
        dailySpendShare: "0.9",
        extractFailureRate: "0.25",
        reextractChangedShare: "0.5",
        showSystemMessages: "true",
        openaiBaseUrl: "https://llm.example.com/v1",
        openaiApiKeyParameter: "/convoseg/openai-api-key",
        inputTokenPrice: "0.15",
        outputTokenPrice: "0.6",
        digestSchedule: "rate(1 day)",
        digestPeriod: "1d",
        digestChannels: "help,dev",
        digestSlackWebhookSecret:
          "arn:aws:secretsmanager:eu-west-1:123456789012:secret:convoseg/webhook-AbCdEf",
        digestSnsTopic: "arn:aws:sns:eu-west-1:123456789012:digests",
        search: "true",
      },
    );
    expect(config).toEqual({
      maxSize: 200,
      settleMs: 12 * 3_600_000,
      minItems: 3,
      graceMs: 120_000,
      scheduleMinutes: 10,
      tickTimeoutMs: 540_000,
      budgetMarginMs: 45_000,
      fifo: false,
      maxBodyBytes: 524_288,
      dueShards: 16,
      previousDueShards: 4,
      workers: 8,
      channelConcurrency: 16,
      conversations: "contiguous",
      askLinks: true,
      logRetention: RetentionDays.THREE_MONTHS,
      retention: { messageDays: 90, resultDays: 30 },
      alarmEmail: "ops@example.com",
      segmentQueueSenders: [
        "arn:aws:iam::123456789012:role/ops",
        "arn:aws:iam::123456789012:role/path/redrive",
      ],
      retainData: false,
      ingest: {
        concurrency: 20,
        maxBatch: 100,
        producers: { channels: { ids: ["ops"], prefixes: ["bots-"] }, changes: true },
      },
      tableMaxUnits: { read: 4000, write: 1000 },
      extract: {
        extractor: "openai",
        modelId: "gpt-4o-mini",
        route: "prefix",
        windowSize: 30,
        overlap: 5,
        prefixStep: 4,
        maxWindows: 6,
        llmConcurrency: 8,
        llmDeadlineMs: 90_000,
        maxOutputTokens: 4096,
        maxTurnChars: 4000,
        bedrockOutput: "json_schema",
        concurrency: 10,
        dailyTokenBudget: 2_000_000,
        channelDailyTokenBudget: 50_000,
        maxAttempts: 20,
        breaker: { failures: 3, cooldownMs: 600_000 },
        reextractChangedShare: 0.5,
        showSystemMessages: true,
        openaiBaseUrl: "https://llm.example.com/v1",
        apiKey: { kind: "parameter", name: "/convoseg/openai-api-key" },
        // 200 messages: 6 prefix windows (maxWindows), the first alone, then 5 at once: 2 rounds
        // of a call and a repair, each up to llmDeadline.
        timeoutMs: 2 * 2 * 90_000 + 30_000,
        inputTokenPrice: 0.15,
        outputTokenPrice: 0.6,
      },
      alarms: { tokenPaceHours: 4, dailySpendShare: 0.9, extractFailureRate: 0.25 },
      segmentVisibilityTimeoutMs: 6 * (2 * 2 * 90_000 + 30_000),
      connectors: { privateChats: false, receiverConcurrency: 5 },
      digest: {
        schedule: "rate(1 day)",
        periodMs: 86_400_000,
        channels: ["help", "dev"],
        slackWebhookSecretArn:
          "arn:aws:secretsmanager:eu-west-1:123456789012:secret:convoseg/webhook-AbCdEf",
        snsTopicArn: "arn:aws:sns:eu-west-1:123456789012:digests",
        retentionDays: 90,
      },
      search: true,
      environments: expect.any(Object),
      names: {
        messagesTable: "chat-messages",
        channelsTable: "chat-channels",
        conversationsTable: "agent-turns",
        resultsTable: "chat-results",
        segmentQueue: "segments",
        ingestQueue: "chat-in",
        dashboard: "chat-pipeline",
      },
    });
  });

  it("takes numbers from props and cdk.json: durations in milliseconds", () => {
    const config = resolve({ settle: 90_000, maxSize: 50, schedule: 60_000 }, { minItems: 2 });
    expect(config).toMatchObject({
      settleMs: 90_000,
      maxSize: 50,
      minItems: 2,
      scheduleMinutes: 1,
    });
  });

  it("prefers stack props over context", () => {
    expect(resolve({ maxSize: 100 }, { maxSize: "200", minItems: "2" })).toMatchObject({
      maxSize: 100,
      minItems: 2,
    });
  });

  it("reads exactly the documented context keys", () => {
    const asked: string[] = [];
    resolveConfig({}, (name) => {
      asked.push(name);
      return undefined;
    });
    expect(asked.sort()).toEqual(
      [
        "alarmEmail",
        "api",
        "apiJwtAudience",
        "apiJwtIssuer",
        "apiStatsOptOut",
        "askChannels",
        "askCommand",
        "askDiscordPublicKey",
        "askMarkers",
        "askModelId",
        "askPerChannel",
        "askPerPerson",
        "askSlackBotToken",
        "askSlackSigningSecret",
        "askTelegramBotToken",
        "askTelegramBotUsername",
        "askTelegramSecretToken",
        "askLinks",
        "bedrockOutput",
        "breakerCooldown",
        "breakerFailures",
        "budgetMargin",
        "changeHoldHours",
        "channelConcurrency",
        "channelDailyTokenBudget",
        "channelsTableName",
        "conversations",
        "conversationsTableName",
        "dailySpendShare",
        "dailyTokenBudget",
        "dashboardName",
        "dataRemovalPolicy",
        "digest",
        "digestChannels",
        "digestPeriod",
        "digestSchedule",
        "digestSlackWebhookSecret",
        "digestSnsTopic",
        "discordBackfillFrom",
        "discordChannels",
        "discordRereadWindow",
        "discordSchedule",
        "discordTokenSecret",
        "dueShards",
        "extractConcurrency",
        "extractFailureRate",
        "extractMaxAttempts",
        "extractor",
        "grace",
        "ingestConcurrency",
        "ingestMaxBatch",
        "ingestQueueName",
        "producerChannels",
        "producerChanges",
        "messageRetentionDays",
        "resultRetentionDays",
        "receiverConcurrency",
        "digestRetentionDays",
        "slackChannels",
        "telegramChats",
        "connectorPrivateChats",
        "inputTokenPrice",
        "llmConcurrency",
        "llmDeadline",
        "logRetentionDays",
        "maxBodyBytes",
        "maxOutputTokens",
        "maxSize",
        "maxTurnChars",
        "maxWindows",
        "messagesTableName",
        "minItems",
        "modelId",
        "openaiApiKeyParameter",
        "openaiApiKeySecret",
        "openaiBaseUrl",
        "outputTokenPrice",
        "overlap",
        "prefixStep",
        "reextractChangedShare",
        "previousDueShards",
        "showSystemMessages",
        "slackSigningSecret",
        "slackBotTokenSecret",
        "telegramSecretToken",
        "queueType",
        "resultsTableName",
        "route",
        "schedule",
        "search",
        "searchEmbeddingsModel",
        "segmentQueueName",
        "segmentQueueSenders",
        "settle",
        "tableMaxReadUnits",
        "tableMaxWriteUnits",
        "tokenPaceHours",
        "windowSize",
        "workers",
      ].sort(),
    );
  });

  it.each<[Record<string, unknown>, SettingName, RegExp]>([
    [{ maxSize: "0" }, "maxSize", /must be an integer from 1 to 100000 \(got "0"\)/],
    [{ ingestConcurrency: "1" }, "ingestConcurrency", /from 2 to 1000 \(got "1"\)/],
    [{ ingestMaxBatch: "10001" }, "ingestMaxBatch", /from 1 to 10000 \(got "10001"\)/],
    [{ producerChannels: "a b" }, "producerChannels", /prefixes ending in \* or \*.*\(got "a b"\)/],
    [{ producerChannels: "te*am" }, "producerChannels", /comma-separated \(no spaces\)/],
    [{ changeHoldHours: "721" }, "changeHoldHours", /from 1 to 720 \(got "721"\)/],
    [{ tableMaxReadUnits: "0" }, "tableMaxReadUnits", /from 1 to 1000000/],
    [{ tableMaxWriteUnits: "lots" }, "tableMaxWriteUnits", /integer/],
    [{ maxSize: "100001" }, "maxSize", /from 1 to 100000/],
    [{ maxSize: "2.5" }, "maxSize", /integer/],
    [{ minItems: "x" }, "minItems", /integer/],
    [{ maxSize: "5", minItems: "6" }, "minItems", /must not exceed maxSize \(5\)/],
    [{ settle: "soon" }, "settle", /must be a duration such as 90s.*\(got "soon"\)/],
    [{ settle: "-1h" }, "settle", /duration/],
    [{ grace: "400d" }, "grace", /at most 365 days/],
    [{ settle: "9007199254740991" }, "settle", /at most 365 days/],
    [{ segmentQueueSenders: "ops" }, "segmentQueueSenders", /IAM role ARNs/],
    [{ schedule: "90s" }, "schedule", /whole minutes from 1m to 60m/],
    [{ schedule: "30s" }, "schedule", /whole minutes/],
    [{ schedule: "2h" }, "schedule", /whole minutes/],
    [
      { budgetMargin: "50s", schedule: "1m" },
      "budgetMargin",
      /less than the tick timeout \(50000 ms\)/,
    ],
    [{ queueType: "lifo" }, "queueType", /must be fifo or standard \(got "lifo"\)/],
    [{ maxBodyBytes: "512" }, "maxBodyBytes", /from 16384 to 1048576/],
    [{ maxBodyBytes: "2000000" }, "maxBodyBytes", /from 16384 to 1048576/],
    [{ dueShards: "0" }, "dueShards", /must be an integer from 1 to 1000 \(got "0"\)/],
    [{ dueShards: "1001" }, "dueShards", /from 1 to 1000/],
    [{ dueShards: "many" }, "dueShards", /integer/],
    [{ previousDueShards: "0" }, "previousDueShards", /from 1 to 1000/],
    [{ workers: "0" }, "workers", /must be an integer from 1 to 1000 \(got "0"\)/],
    [
      { workers: "5" },
      "workers",
      /must not exceed dueShards \(4\): each worker owns at least one shard/,
    ],
    [{ channelConcurrency: "65" }, "channelConcurrency", /from 1 to 64/],
    [{ previousDueShards: "2.5" }, "previousDueShards", /integer/],
    [{ logRetentionDays: "10" }, "logRetentionDays", /must be one of 1, 3, 5, 7, 14, 30/],
    [{ alarmEmail: "ops" }, "alarmEmail", /email address/],
    [{ dataRemovalPolicy: "keep" }, "dataRemovalPolicy", /retain or destroy/],
    [{ messagesTableName: "a b" }, "messagesTableName", /letters/],
    [{ channelsTableName: "ab" }, "channelsTableName", /3-255/],
    [{ segmentQueueName: "segments" }, "segmentQueueName", /\.fifo \(queueType is fifo\)/],
    [
      { segmentQueueName: "segments.fifo", queueType: "standard" },
      "segmentQueueName",
      /queueType is standard/,
    ],
    [{ ingestQueueName: "x".repeat(72) }, "ingestQueueName", /1-71/],
    [{ dashboardName: "my dashboard" }, "dashboardName", /letters/],
    [{ resultsTableName: "a/b" }, "resultsTableName", /3-255 letters/],
    [{ extractor: "offline" }, "extractor", /must be bedrock or openai \(got "offline"\)/],
    [{ modelId: "amazon.*" }, "modelId", /a Bedrock model id .*no wildcard/],
    [{ modelId: "*" }, "modelId", /no wildcard/],
    [
      { modelId: "arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-lite-v1:0" },
      "modelId",
      /no wildcard or ARN/,
    ],
    [
      { route: "diagonal" },
      "route",
      /must be one of sliding, prefix, non_prefix, full, full2 \(got "diagonal"\)/,
    ],
    [{ windowSize: "0" }, "windowSize", /from 1 to 1000/],
    [
      { windowSize: "20", overlap: "20" },
      "overlap",
      /must be less than windowSize \(20\) \(got 20\)/,
    ],
    [{ windowSize: "5", overlap: "7" }, "overlap", /must be less than windowSize \(5\)/],
    [{ overlap: "-1" }, "overlap", /integer from 0/],
    [{ prefixStep: "0" }, "prefixStep", /from 1 to 1000/],
    [{ maxWindows: "1001" }, "maxWindows", /from 1 to 1000/],
    [{ maxOutputTokens: "100" }, "maxOutputTokens", /from 256 to 65536/],
    [{ maxTurnChars: "400001" }, "maxTurnChars", /from 200 to 400000/],
    [{ llmConcurrency: "33" }, "llmConcurrency", /from 1 to 32/],
    [{ llmDeadline: "500ms" }, "llmDeadline", /from 1000 ms to less than 870000 ms/],
    [
      { llmDeadline: "870s" },
      "llmDeadline",
      /less than 870000 ms \(Lambda's 15 minutes less the extraction function's 30000 ms margin\) \(got 870000\)/,
    ],
    [{ llmDeadline: "soon" }, "llmDeadline", /duration/],
    [{ bedrockOutput: "text" }, "bedrockOutput", /json_schema or tool/],
    [{ extractConcurrency: "1" }, "extractConcurrency", /from 2 to 1000/],
    [{ extractConcurrency: "1001" }, "extractConcurrency", /from 2 to 1000/],
    [{ dailyTokenBudget: "999" }, "dailyTokenBudget", /from 1000 to 1000000000000/],
    [
      { dailyTokenBudget: "5000", channelDailyTokenBudget: "6000" },
      "channelDailyTokenBudget",
      /must not exceed dailyTokenBudget \(5000\)/,
    ],
    [{ extractMaxAttempts: "0" }, "extractMaxAttempts", /from 1 to 100/],
    [{ breakerFailures: "0" }, "breakerFailures", /from 1 to 100/],
    [{ breakerCooldown: "5s" }, "breakerCooldown", /from 10000 ms to 3600000 ms \(got 5000\)/],
    [{ breakerCooldown: "2h" }, "breakerCooldown", /to 3600000 ms/],
    [{ tokenPaceHours: "25" }, "tokenPaceHours", /from 1 to 24/],
    [{ dailySpendShare: "0" }, "dailySpendShare", /a share above 0 and at most 1.*\(got "0"\)/],
    [{ dailySpendShare: "1.5" }, "dailySpendShare", /at most 1/],
    [{ extractFailureRate: "1" }, "extractFailureRate", /a share above 0 and below 1/],
    [{ extractFailureRate: "half" }, "extractFailureRate", /a share/],
    [{ messageRetentionDays: "0" }, "messageRetentionDays", /from 1 to 36500/],
    [{ resultRetentionDays: "36501" }, "resultRetentionDays", /from 1 to 36500/],
    [
      { messageRetentionDays: "30", resultRetentionDays: "31" },
      "resultRetentionDays",
      /must not exceed messageRetentionDays \(30\): a result must not outlive the messages it cites \(got 31\)/,
    ],
    [{ inputTokenPrice: "-1" }, "inputTokenPrice", /USD per million tokens/],
    [{ outputTokenPrice: "cheap" }, "outputTokenPrice", /USD per million tokens/],
    [{ outputTokenPrice: "5000" }, "outputTokenPrice", /from 0 to 1000/],
    [
      { extractor: "openai", openaiApiKeySecret: SECRET },
      "modelId",
      /must be set when extractor is openai/,
    ],
    [
      { extractor: "openai", modelId: "gpt-4o-mini", openaiApiKeySecret: SECRET },
      "openaiBaseUrl",
      /must be set when extractor is openai/,
    ],
    [
      { extractor: "openai", modelId: "m", openaiBaseUrl: "http://llm.example.com" },
      "openaiBaseUrl",
      /an https:\/\/ URL/,
    ],
    [
      { extractor: "openai", modelId: "m", openaiBaseUrl: "https://llm.example.com" },
      "openaiApiKeySecret",
      /or openaiApiKeyParameter must name where the API key is kept/,
    ],
    [
      {
        extractor: "openai",
        modelId: "m",
        openaiBaseUrl: "https://llm.example.com",
        openaiApiKeySecret: SECRET,
        openaiApiKeyParameter: "/convoseg/key",
      },
      "openaiApiKeySecret",
      /openaiApiKeyParameter are both set: set only one/,
    ],
    [
      { extractor: "openai", modelId: "m", openaiApiKeySecret: "sk-live-123" },
      "openaiApiKeySecret",
      /a Secrets Manager secret's full ARN, not the key itself \(the value is not shown\)/,
    ],
    [
      { openaiApiKeyParameter: "arn:aws:ssm:us-east-1:123456789012:parameter/key" },
      "openaiApiKeyParameter",
      /not an ARN/,
    ],
    [{ openaiApiKeyParameter: "/aws/reference/key" }, "openaiApiKeyParameter", /not an ARN/],
    [
      { openaiBaseUrl: "https://llm.example.com" },
      "openaiBaseUrl",
      /only when extractor is openai/,
    ],
    [{ openaiApiKeySecret: SECRET }, "openaiApiKeySecret", /only when extractor is openai/],
    [
      { reextractChangedShare: "1.5" },
      "reextractChangedShare",
      /from 0 and at most 1.*\(got "1.5"\)/,
    ],
    [{ reextractChangedShare: "-0.1" }, "reextractChangedShare", /a share from 0 and at most 1/],
    [{ reextractChangedShare: "half" }, "reextractChangedShare", /a share from 0/],
    [{ showSystemMessages: "yes" }, "showSystemMessages", /must be true or false \(got "yes"\)/],
    [{ api: "yes" }, "api", /must be true or false/],
    [{ apiJwtIssuer: "https://id.example.com" }, "apiJwtIssuer", /set api=true too/],
    [
      { api: "true", apiJwtIssuer: "http://id.example.com", apiJwtAudience: "a" },
      "apiJwtIssuer",
      /an https URL/,
    ],
    [
      { api: "true", apiJwtIssuer: "https://id.example.com" },
      "apiJwtAudience",
      /must be set with apiJwtIssuer/,
    ],
    [{ api: "true", apiJwtAudience: "a" }, "apiJwtAudience", /without apiJwtIssuer/],
    [{ apiStatsOptOut: "ann" }, "apiStatsOptOut", /set api=true too/],
    [{ api: "true", apiStatsOptOut: "ann,,bob" }, "apiStatsOptOut", /comma-separated/],
  ])("rejects context %j, naming %s", (context, setting, problem) => {
    const attempt = () => resolve({}, context);
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(`convoseg: invalid setting ${setting}`);
    expect(attempt).toThrow(problem);
  });

  it("reads the stats route's opt-out list, trimmed, for the read API", () => {
    expect(resolve({}, { api: "true", apiStatsOptOut: "Ann, u123 ,Jane Doe" }).api).toEqual({
      statsOptOut: ["Ann", "u123", "Jane Doe"],
    });
    expect(resolve({}, { api: "true" }).api).toEqual({});
  });

  it("reports every bad setting at once, a line each, not the rules a refused one would fail", () => {
    let error: unknown;
    try {
      // windowSize is refused, so overlap's rule over it is not run; maxSize and settle are too.
      resolve({ settle: "soon" }, { maxSize: "0", windowSize: "0", overlap: "70", api: "yes" });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { setting, faults, message } = error as ConfigError;
    expect(faults.map((f) => [f.setting, f.source])).toEqual([
      ["maxSize", "context"],
      ["settle", "props"],
      ["windowSize", "context"],
      ["api", "context"],
    ]);
    expect(setting).toBe("maxSize");
    expect(message.split("\n")).toEqual([
      'convoseg: invalid setting maxSize (from CDK context): must be an integer from 1 to 100000 (got "0")',
      'convoseg: invalid setting settle (from stack props): must be a duration such as 90s, 15m, 24h, 2d or whole milliseconds (got "soon")',
      'convoseg: invalid setting windowSize (from CDK context): must be an integer from 1 to 1000 (got "0")',
      'convoseg: invalid setting api (from CDK context): must be true or false (got "yes")',
    ]);
  });

  it("never echoes what may be an API key given in place of where it is kept", () => {
    for (const setting of ["openaiApiKeySecret", "openaiApiKeyParameter"]) {
      const attempt = () =>
        resolve({}, { extractor: "openai", modelId: "m", [setting]: "sk-live 123" });
      expect(attempt).toThrow(`convoseg: invalid setting ${setting}`);
      expect(attempt).not.toThrow("sk-live");
    }
  });

  it("names a cross-region inference profile's model and takes decimal prices from props", () => {
    expect(
      resolve({ modelId: "us.amazon.nova-pro-v1:0", inputTokenPrice: 0.8, outputTokenPrice: 3.2 })
        .extract,
    ).toMatchObject({
      modelId: "us.amazon.nova-pro-v1:0",
      inputTokenPrice: 0.8,
      outputTokenPrice: 3.2,
    });
  });

  it("sizes the extraction timeout and the segment queue's visibility from maxSize and the route", () => {
    const config = resolve({}, { maxSize: "50", route: "full" });
    expect(config.extract.timeoutMs).toBe(270_000);
    expect(config.segmentVisibilityTimeoutMs).toBe(6 * 270_000);
    // 100 messages in windows of 20 overlapping by 2: 6 windows, 2 rounds of 4.
    expect(resolve({}, { maxSize: "100", windowSize: "20", overlap: "2" }).extract.timeoutMs).toBe(
      2 * 240_000 + 30_000,
    );
  });

  it("says where a bad value came from: CDK context, stack props or the default", () => {
    expect(() => resolve({}, { settle: "soon" })).toThrow(
      "convoseg: invalid setting settle (from CDK context): must be a duration",
    );
    expect(() => resolve({ settle: "tomorrow" })).toThrow(
      "convoseg: invalid setting settle (from stack props): must be a duration",
    );
    expect(() => resolve({ settle: Number.NaN })).toThrow("settle (from stack props)");
  });
});

describe("tickTimeoutMs", () => {
  it("ends a tick before the next one starts, within Lambda's 15 minutes", () => {
    expect(tickTimeoutMs(60_000)).toBe(50_000);
    expect(tickTimeoutMs(5 * 60_000)).toBe(270_000);
    expect(tickTimeoutMs(15 * 60_000)).toBe(810_000);
    expect(tickTimeoutMs(60 * 60_000)).toBe(15 * 60_000);
  });
});

describe("segmentEnvironment", () => {
  const resources = { messagesTable: "m", channelsTable: "c", queueUrl: "https://q" };

  it("sets every variable readSegmentConfig reads, and it reads them back unchanged", () => {
    const config = resolve({}, { settle: "12h", minItems: "2", queueType: "standard" });
    const environment = segmentEnvironment(config, resources);
    expect(Object.keys(environment).sort()).toEqual(
      [
        ...Object.keys(SEGMENT_DEFAULTS),
        "MESSAGES_TABLE",
        "CHANNELS_TABLE",
        "SEGMENT_QUEUE_URL",
      ].sort(),
    );
    expect(readSegmentConfig(environment)).toEqual({
      messagesTable: "m",
      channelsTable: "c",
      queueUrl: "https://q",
      fifo: false,
      maxBodyBytes: 262_144,
      budgetMarginMs: 20_000,
      dueShards: 4,
      previousDueShards: null,
      workers: 1,
      workerFunction: null,
      askLinks: false,
      settings: {
        maxSize: 500,
        settle: 12 * 3_600_000,
        minItems: 2,
        grace: 60_000,
        maxArrivalsPerChannel: 5000,
        leaseMs: 270_000,
        holdTimeoutMs: 300_000,
        channelConcurrency: 8,
        conversations: "linked",
      },
    });
  });
});

describe("extraction sizing", () => {
  const sizing = (overrides: Partial<ExtractSizing>): ExtractSizing => ({
    maxSize: 500,
    route: "sliding",
    windowSize: 20,
    overlap: 2,
    prefixStep: 5,
    maxWindows: 8,
    llmConcurrency: 4,
    llmDeadlineMs: 120_000,
    ...overrides,
  });

  it("runs windows llmConcurrency at once; prefix's first alone, full2's passes in turn", () => {
    expect(extractRounds(sizing({}))).toBe(7);
    expect(extractRounds(sizing({ llmConcurrency: 32 }))).toBe(1);
    expect(extractRounds(sizing({ route: "non_prefix" }))).toBe(2);
    expect(extractRounds(sizing({ route: "prefix" }))).toBe(1 + 2);
    expect(extractRounds(sizing({ route: "prefix", maxWindows: 1 }))).toBe(1);
    expect(extractRounds(sizing({ route: "full" }))).toBe(1);
    expect(extractRounds(sizing({ route: "full2", llmConcurrency: 32 }))).toBe(2);
  });

  it("gives each round a call and a repair of 120 s each, a 30 s margin, at most 15 minutes", () => {
    expect(extractTimeoutMs(sizing({ route: "full" }))).toBe(270_000);
    expect(extractTimeoutMs(sizing({ route: "full2" }))).toBe(510_000);
    expect(extractTimeoutMs(sizing({ route: "non_prefix" }))).toBe(510_000);
    expect(extractTimeoutMs(sizing({ maxSize: 60 }))).toBe(270_000);
    expect(extractTimeoutMs(sizing({ maxSize: 100 }))).toBe(510_000);
    expect(extractTimeoutMs(sizing({}))).toBe(900_000);
  });

  it("sizes each call by llmDeadlineMs, the whole call's deadline", () => {
    expect(extractTimeoutMs(sizing({ route: "full", llmDeadlineMs: 30_000 }))).toBe(90_000);
    expect(extractTimeoutMs(sizing({ route: "full2", llmDeadlineMs: 60_000 }))).toBe(270_000);
  });
});

describe("bedrockModel", () => {
  it("tells cross-region inference profiles from model ids by their geography prefix", () => {
    expect(bedrockModel("amazon.nova-lite-v1:0")).toEqual({
      kind: "model",
      modelId: "amazon.nova-lite-v1:0",
    });
    for (const geography of ["us", "eu", "apac", "global", "us-gov", "jp"]) {
      expect(bedrockModel(`${geography}.anthropic.claude-3-5-haiku-20241022-v1:0`)).toEqual({
        kind: "profile",
        profileId: `${geography}.anthropic.claude-3-5-haiku-20241022-v1:0`,
        modelId: "anthropic.claude-3-5-haiku-20241022-v1:0",
      });
    }
  });
});

describe("extractEnvironment", () => {
  const resources = { resultsTable: "r", messagesTable: "m" };

  it.each(["2", "0.3.1", "-1", "x"])(
    "refuses REEXTRACT_CHANGED_SHARE=%s at cold start, naming it and its range",
    (share) => {
      const environment = extractEnvironment(resolve({}, {}), resources);
      expect(() => readExtractConfig({ ...environment, REEXTRACT_CHANGED_SHARE: share })).toThrow(
        /REEXTRACT_CHANGED_SHARE must be a number from 0 \(on every change\) to 1 \(never\)/,
      );
    },
  );

  it("carries showSystemMessages to SHOW_SYSTEM_MESSAGES, and refuses any other value at cold start", () => {
    const environment = extractEnvironment(resolve({}, { showSystemMessages: "true" }), resources);
    expect(environment.SHOW_SYSTEM_MESSAGES).toBe("true");
    expect(readExtractConfig(environment).showSystemMessages).toBe(true);
    expect(() => readExtractConfig({ ...environment, SHOW_SYSTEM_MESSAGES: "1" })).toThrow(
      /SHOW_SYSTEM_MESSAGES must be one of true, false \(got "1"\)/,
    );
  });

  it("reads the segment queue a redaction sends re-extractions to, refusing a blank one", () => {
    const environment = extractEnvironment(resolve({}, {}), {
      ...resources,
      segmentQueueUrl: "https://sqs.example/1/segments.fifo",
    });
    expect(readExtractConfig(environment).segmentQueueUrl).toBe(
      "https://sqs.example/1/segments.fifo",
    );
    expect(() => readExtractConfig({ ...environment, SEGMENT_QUEUE_URL: "a b" })).toThrow(
      'SEGMENT_QUEUE_URL must be a queue URL (got "a b")',
    );
    expect(
      readExtractConfig({ ...environment, SEGMENT_QUEUE_URL: undefined }).segmentQueueUrl,
    ).toBe(undefined);
  });

  it.each(["MESSAGES_TABLE", "RESULTS_TABLE"])(
    "refuses a blank %s at cold start, naming it",
    (name) => {
      const environment = extractEnvironment(resolve({}, {}), resources);
      expect(() => readExtractConfig({ ...environment, [name]: " " })).toThrow(
        new RegExp(`${name}.*not blank`),
      );
    },
  );

  it("sets every variable readExtractConfig reads, and it reads them back unchanged", () => {
    const config = resolve(
      {},
      { route: "non_prefix", windowSize: "20", overlap: "2", prefixStep: "3", llmConcurrency: "2" },
    );
    const environment = extractEnvironment(config, resources);
    expect(Object.keys(environment).sort()).toEqual(
      [
        ...Object.keys(EXTRACT_DEFAULTS),
        "RESULTS_TABLE",
        "MESSAGES_TABLE",
        "EXTRACTOR",
        "MODEL_ID",
      ].sort(),
    );
    expect(readExtractConfig(environment)).toEqual({
      resultsTable: "r",
      messagesTable: "m",
      extractor: "bedrock",
      modelId: "amazon.nova-lite-v1:0",
      bedrockOutput: "tool",
      analyzer: {
        route: "non_prefix",
        windowSize: 20,
        overlap: 2,
        prefixStep: 3,
        maxWindows: 8,
        maxConcurrency: 2,
      },
      maxOutputTokens: 4096,
      maxTurnChars: 4000,
      llmDeadlineMs: 120_000,
      leaseMs: config.extract.timeoutMs,
      windowOutputTtlMs: 15 * 86_400_000,
      dailyTokenBudget: 10_000_000,
      // Unset: a quarter of the deployment's, so that one channel never pauses the others.
      channelTokenBudget: 2_500_000,
      maxAttempts: 16,
      breaker: { failures: 5, cooldownMs: 300_000 },
      reextractChangedShare: 0.25,
      showSystemMessages: false,
    });
  });

  it("passes llmDeadline, which a hand-set environment must keep within LEASE", () => {
    const environment = extractEnvironment(resolve({ llmDeadline: "45s" }), resources);
    expect(environment.LLM_DEADLINE).toBe("45000");
    expect(readExtractConfig(environment).llmDeadlineMs).toBe(45_000);
    // Every problem at once, the deadline's among them.
    expect(() =>
      readExtractConfig({ ...environment, LEASE: "1m", LLM_DEADLINE: "2m", WINDOW_SIZE: "0" }),
    ).toThrow(
      /WINDOW_SIZE must be an integer from 1 to 1000 .*LLM_DEADLINE must be less than LEASE \(60000 ms\), the function's timeout \(got 120000\)/,
    );
    expect(() => readExtractConfig({ ...environment, LLM_DEADLINE: "16m" })).toThrow(
      /LLM_DEADLINE must be at most 900000 ms/,
    );
  });

  it("passes the budgets, the attempts and the DLQ the function moves given-up segments to", () => {
    const config = resolve({ channelDailyTokenBudget: 5000, extractMaxAttempts: 3 });
    const environment = extractEnvironment(config, {
      ...resources,
      deadLetterQueueUrl: "https://sqs.us-east-1.amazonaws.com/123456789012/segments-dlq.fifo",
    });
    expect(readExtractConfig(environment)).toMatchObject({
      dailyTokenBudget: 10_000_000,
      channelTokenBudget: 5000,
      maxAttempts: 3,
      deadLetterQueueUrl: "https://sqs.us-east-1.amazonaws.com/123456789012/segments-dlq.fifo",
    });
  });

  it("passes the result retention, which follows the message retention when unset", () => {
    const days = (props: ConvosegSettings) =>
      readExtractConfig(extractEnvironment(resolve(props), resources)).resultRetentionMs;
    expect(extractEnvironment(resolve({}), resources)).not.toHaveProperty("RESULT_RETENTION_DAYS");
    expect(days({})).toBeUndefined();
    expect(days({ messageRetentionDays: 30 })).toBe(30 * 86_400_000);
    expect(days({ messageRetentionDays: 30, resultRetentionDays: 7 })).toBe(7 * 86_400_000);
    expect(days({ resultRetentionDays: 7 })).toBe(7 * 86_400_000);
    expect(resolve({ messageRetentionDays: 30 }).retention).toEqual({
      messageDays: 30,
      resultDays: 30,
    });
  });

  it("passes where the OpenAI key is kept, never a key", () => {
    const base = {
      extractor: "openai",
      modelId: "gpt-4o-mini",
      openaiBaseUrl: "https://x.example",
    };
    const secret = extractEnvironment(
      resolve({}, { ...base, openaiApiKeySecret: SECRET }),
      resources,
    );
    expect(secret).toMatchObject({
      OPENAI_BASE_URL: "https://x.example",
      OPENAI_API_KEY_SECRET: SECRET,
    });
    expect(secret.OPENAI_API_KEY_PARAMETER).toBeUndefined();
    expect(readExtractConfig(secret)).toMatchObject({
      extractor: "openai",
      baseURL: "https://x.example",
      apiKey: { kind: "secret", id: SECRET },
    });
    const parameter = extractEnvironment(
      resolve({}, { ...base, openaiApiKeyParameter: "/convoseg/key" }),
      resources,
    );
    expect(parameter.OPENAI_API_KEY_SECRET).toBeUndefined();
    expect(readExtractConfig(parameter).apiKey).toEqual({
      kind: "parameter",
      name: "/convoseg/key",
    });
  });
});

describe("checkExtractEnvironment", () => {
  const environment = extractEnvironment(resolve({}), { resultsTable: "r", messagesTable: "m" });

  it("turns the function's complaint into a ConfigError naming the setting", () => {
    for (const [variable, value, setting] of [
      ["ROUTE", "diagonal", "route"],
      ["OVERLAP", EXTRACT_DEFAULTS.WINDOW_SIZE, "overlap"],
      ["MODEL_ID", "", "modelId"],
      ["RESULTS_TABLE", "", "resultsTableName"],
    ] as const) {
      const attempt = () =>
        checkExtractEnvironment({ ...environment, [variable]: value }, () => "context");
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(`convoseg: invalid setting ${setting} (from CDK context): `);
      expect(attempt).toThrow(`(the extraction function's ${variable})`);
    }
  });

  it("rethrows a complaint about a variable no setting sets as it is", () => {
    expect(() => checkExtractEnvironment({ ...environment, WINDOW_OUTPUT_TTL: "1h" })).toThrow(
      KnowledgeConfigError,
    );
  });
});

describe("the Discord poller's settings", () => {
  const secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:discord-token-AbCdEf";
  const resolve = (props: Record<string, unknown>) => resolveConfig(props, () => undefined);

  it("deploy no poller by default, and one with channels and a token secret", () => {
    expect(resolve({}).discord).toBeUndefined();
    expect(
      resolve({ discordChannels: "111,222", discordTokenSecret: secret, discordRereadWindow: 50 })
        .discord,
    ).toEqual({
      channels: ["111", "222"],
      tokenSecretArn: secret,
      scheduleMinutes: 5,
      rereadWindow: 50,
    });
  });

  it("refuse channels without the secret, a bad id, a bad window and a bad date, naming each", () => {
    expect(() => resolve({ discordChannels: "111" })).toThrow(/discordTokenSecret/);
    expect(() => resolve({ discordTokenSecret: secret })).toThrow(/discordTokenSecret/);
    expect(() => resolve({ discordChannels: "11x", discordTokenSecret: secret })).toThrow(
      /discordChannels/,
    );
    expect(() =>
      resolve({ discordChannels: "111", discordTokenSecret: secret, discordRereadWindow: 5000 }),
    ).toThrow(/discordRereadWindow/);
    expect(() =>
      resolve({
        discordChannels: "111",
        discordTokenSecret: secret,
        discordBackfillFrom: "2014-01-01",
      }),
    ).toThrow(/discordBackfillFrom/);
    expect(() => resolve({ discordChannels: "111", discordTokenSecret: "my-token-value" })).toThrow(
      /not shown/,
    );
  });
});
