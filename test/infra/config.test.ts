import { RetentionDays } from "aws-cdk-lib/aws-logs";
import { describe, expect, it } from "vitest";
import {
  ConfigError,
  type ConvosegSettings,
  resolveConfig,
  type SettingName,
  segmentEnvironment,
  tickTimeoutMs,
} from "../../infra/config.js";
import { readSegmentConfig, SEGMENT_DEFAULTS } from "../../lib/pipeline/index.js";

const noContext = () => undefined;
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
      logRetention: RetentionDays.ONE_MONTH,
      alarmEmail: undefined,
      segmentQueueSenders: [],
      retainData: true,
      names: {
        messagesTable: undefined,
        channelsTable: undefined,
        conversationsTable: undefined,
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
        logRetentionDays: "90",
        alarmEmail: "ops@example.com",
        segmentQueueSenders:
          "arn:aws:iam::123456789012:role/ops, arn:aws:iam::123456789012:role/path/redrive",
        dataRemovalPolicy: "destroy",
        messagesTableName: "chat-messages",
        channelsTableName: "chat-channels",
        conversationsTableName: "agent-turns",
        segmentQueueName: "segments",
        ingestQueueName: "chat-in",
        dashboardName: "chat-pipeline",
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
      logRetention: RetentionDays.THREE_MONTHS,
      alarmEmail: "ops@example.com",
      segmentQueueSenders: [
        "arn:aws:iam::123456789012:role/ops",
        "arn:aws:iam::123456789012:role/path/redrive",
      ],
      retainData: false,
      names: {
        messagesTable: "chat-messages",
        channelsTable: "chat-channels",
        conversationsTable: "agent-turns",
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
        "budgetMargin",
        "channelsTableName",
        "conversationsTableName",
        "dashboardName",
        "dataRemovalPolicy",
        "grace",
        "ingestQueueName",
        "logRetentionDays",
        "maxBodyBytes",
        "maxSize",
        "messagesTableName",
        "minItems",
        "queueType",
        "schedule",
        "segmentQueueName",
        "segmentQueueSenders",
        "settle",
      ].sort(),
    );
  });

  it.each<[Record<string, unknown>, SettingName, RegExp]>([
    [{ maxSize: "0" }, "maxSize", /must be an integer from 1 to 100000 \(got "0"\)/],
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
  ])("rejects context %j, naming %s", (context, setting, problem) => {
    const attempt = () => resolve({}, context);
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(`convoseg: invalid setting ${setting}`);
    expect(attempt).toThrow(problem);
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
      settings: {
        maxSize: 500,
        settle: 12 * 3_600_000,
        minItems: 2,
        grace: 60_000,
        maxArrivalsPerChannel: 5000,
        leaseMs: 270_000,
        holdTimeoutMs: 300_000,
        channelConcurrency: 8,
      },
    });
  });
});
