import { App } from "aws-cdk-lib";
import { Match, type Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { ConvosegStack } from "../../infra/stack.js";
import { logicalId, modelArn, type Synthesized, synthesize } from "./synth.js";

const SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:convoseg/openai-AbCdEf";

/** What `cdk deploy -c …` passes: every value a string. */
const CONTEXT = {
  maxSize: "200",
  settle: "12h",
  minItems: "3",
  grace: "2m",
  schedule: "10m",
  queueType: "standard",
  maxBodyBytes: "524288",
  logRetentionDays: "90",
  alarmEmail: "ops@example.com",
  dataRemovalPolicy: "destroy",
  messagesTableName: "chat-messages",
  channelsTableName: "chat-channels",
  resultsTableName: "chat-results",
  segmentQueueName: "chat-segments",
  ingestQueueName: "chat-in",
  dashboardName: "chat-pipeline",
  route: "full2",
  llmConcurrency: "2",
  bedrockOutput: "json_schema",
  extractConcurrency: "20",
  modelId: "amazon.nova-pro-v1:0",
  inputTokenPrice: "0.8",
  outputTokenPrice: "3.2",
  breakerFailures: "3",
  breakerCooldown: "10m",
  tokenPaceHours: "4",
  dailySpendShare: "0.9",
  extractFailureRate: "0.25",
};

let synthesized: Synthesized;
let template: Template;

beforeAll(() => {
  // Stack props win over context: maxSize comes out 100.
  synthesized = synthesize(CONTEXT, { maxSize: 100 });
  template = synthesized.template;
}, 120_000);

const properties = (construct: Parameters<typeof logicalId>[1]) =>
  (
    template.toJSON().Resources[logicalId(synthesized.stack, construct)] as {
      Properties: Record<string, unknown>;
    }
  ).Properties;

describe("a stack configured through CDK context (and a prop)", () => {
  it("passes the segmenter settings, queue type and body limit to the function", () => {
    const { segmentation } = synthesized.stack;
    const fn = properties(segmentation.function.function);
    expect((fn.Environment as { Variables: unknown }).Variables).toMatchObject({
      MAX_SIZE: "100",
      SETTLE: String(12 * 3_600_000),
      MIN_ITEMS: "3",
      GRACE: "120000",
      SEGMENT_QUEUE_FIFO: "false",
      MAX_BODY_BYTES: "524288",
      LEASE: "540000",
    });
    expect(fn.Timeout).toBe(540);
  });

  it("sizes and configures extraction from its settings", () => {
    const { extraction, segmentation } = synthesized.stack;
    const fn = properties(extraction.function.function);
    // full2: two passes one after the other, each a call and a repair of 120 s, plus 30 s.
    expect(fn.Timeout).toBe(2 * 2 * 120 + 30);
    expect(properties(segmentation.segments.queue).VisibilityTimeout).toBe(6 * 510);
    expect((fn.Environment as { Variables: unknown }).Variables).toMatchObject({
      ROUTE: "full2",
      LLM_CONCURRENCY: "2",
      BEDROCK_OUTPUT: "json_schema",
      MODEL_ID: "amazon.nova-pro-v1:0",
      LEASE: "510000",
    });
    // A standard queue: one segment per invocation (the consumer runs a batch's records at once).
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      FunctionName: { Ref: logicalId(synthesized.stack, extraction.function.function) },
      BatchSize: 1,
      ScalingConfig: { MaximumConcurrency: 20 },
      FunctionResponseTypes: ["ReportBatchItemFailures"],
    });
    template.hasResourceProperties("AWS::IAM::Policy", {
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Effect: "Allow",
            Action: "bedrock:InvokeModel",
            Resource: modelArn("amazon.nova-pro-v1:0"),
          },
        ]),
      },
    });
    const body = JSON.stringify(
      properties(synthesized.stack.observability.dashboard).DashboardBody,
    );
    expect(body).toContain("(input * 0.8 + output * 3.2) / 1000000");
  });

  it("makes the segment queue and its DLQ standard, named, sized to the body limit", () => {
    const { segments } = synthesized.stack.segmentation;
    const queue = properties(segments.queue);
    expect(queue).toMatchObject({ QueueName: "chat-segments", MaximumMessageSize: 524_288 });
    expect(queue.FifoQueue).toBeUndefined();
    const dlq = properties(segments.deadLetterQueue);
    expect(dlq).toMatchObject({ QueueName: "chat-segments-dlq" });
    expect(dlq.FifoQueue).toBeUndefined();
    expect(properties(synthesized.stack.ingestion.queue.queue)).toMatchObject({
      QueueName: "chat-in",
    });
  });

  it("ticks on the configured schedule, alarming per period", () => {
    template.hasResourceProperties("AWS::Events::Rule", {
      ScheduleExpression: "rate(10 minutes)",
    });
    template.hasResourceProperties("AWS::Lambda::EventInvokeConfig", {
      MaximumEventAgeInSeconds: 600,
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "TicksStoppedEarly",
      Period: 600,
    });
  });

  it("names the tables and deletes them with the stack when told to", () => {
    for (const [table, name] of [
      [synthesized.stack.storage.messages, "chat-messages"],
      [synthesized.stack.storage.channels, "chat-channels"],
      [synthesized.stack.storage.results, "chat-results"],
    ] as const) {
      expect(properties(table)).toMatchObject({
        TableName: name,
        DeletionProtectionEnabled: false,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      });
    }
    for (const table of Object.values(template.findResources("AWS::DynamoDB::Table"))) {
      expect(table.DeletionPolicy).toBe("Delete");
    }
  });

  it("keeps logs as configured, names the dashboard, subscribes the email", () => {
    for (const logs of Object.values(template.findResources("AWS::Logs::LogGroup"))) {
      expect(logs.Properties.RetentionInDays).toBe(90);
    }
    template.hasResourceProperties("AWS::CloudWatch::Dashboard", {
      DashboardName: "chat-pipeline",
    });
    template.hasResourceProperties("AWS::SNS::Subscription", {
      Protocol: "email",
      Endpoint: "ops@example.com",
    });
  });

  it("gives the extraction function its circuit breaker, and the alarms their thresholds", () => {
    const fn = properties(synthesized.stack.extraction.function.function);
    expect((fn.Environment as { Variables: unknown }).Variables).toMatchObject({
      BREAKER_FAILURES: "3",
      BREAKER_COOLDOWN: "600000",
    });
    const threshold = (name: string) =>
      Object.values(
        template.findResources("AWS::CloudWatch::Alarm", {
          Properties: { AlarmName: `Test-${name}` },
        }),
      ).map((alarm) => alarm.Properties.Threshold);
    // The default daily budget, 10 million tokens.
    expect(threshold("TokenSpendHourly")).toEqual([10_000_000 / 4]);
    expect(threshold("TokenSpendDaily")).toEqual([10_000_000 * 0.9]);
    expect(threshold("ExtractionFailureRate")).toEqual([0.25]);
  });

  it("still passes the AwsSolutions checks", () => {
    expect(synthesized.report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
  });
});

describe("invalid configuration", () => {
  it.each([
    [{ settle: "soon" }, "convoseg: invalid setting settle (from CDK context)"],
    [{ queueType: "lifo" }, "convoseg: invalid setting queueType (from CDK context)"],
    [{ schedule: "90s" }, "convoseg: invalid setting schedule (from CDK context)"],
    [{ route: "diagonal" }, "convoseg: invalid setting route (from CDK context)"],
    [
      { windowSize: "10", overlap: "10" },
      "convoseg: invalid setting overlap (from CDK context): must be less than windowSize (10)",
    ],
    [
      { extractor: "openai", modelId: "m", openaiApiKeySecret: SECRET },
      "convoseg: invalid setting openaiBaseUrl: must be set when extractor is openai",
    ],
    [
      { extractor: "openai", modelId: "m", openaiBaseUrl: "https://llm.example.com" },
      "convoseg: invalid setting openaiApiKeySecret: or openaiApiKeyParameter must name",
    ],
    [
      {
        extractor: "openai",
        modelId: "m",
        openaiBaseUrl: "https://llm.example.com",
        openaiApiKeySecret: SECRET,
        openaiApiKeyParameter: "/convoseg/key",
      },
      "convoseg: invalid setting openaiApiKeySecret (from CDK context): and openaiApiKeyParameter are both set",
    ],
  ])("fails synth on %j, naming the setting", (context, message) => {
    expect(() => new ConvosegStack(new App({ context }), "Bad")).toThrow(message);
  });
});
