import { App } from "aws-cdk-lib";
import type { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { ConvosegStack } from "../../infra/stack.js";
import { logicalId, type Synthesized, synthesize } from "./synth.js";

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
  segmentQueueName: "chat-segments",
  ingestQueueName: "chat-in",
  dashboardName: "chat-pipeline",
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

  it("still passes the AwsSolutions checks", () => {
    expect(synthesized.report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
  });
});

describe("invalid configuration", () => {
  it.each([
    [{ settle: "soon" }, "convoseg: invalid setting settle (from CDK context)"],
    [{ queueType: "lifo" }, "convoseg: invalid setting queueType (from CDK context)"],
    [{ schedule: "90s" }, "convoseg: invalid setting schedule (from CDK context)"],
  ])("fails synth on %j, naming the setting", (context, message) => {
    expect(() => new ConvosegStack(new App({ context }), "Bad")).toThrow(message);
  });
});
