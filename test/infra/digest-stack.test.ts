/** The scheduled digest in the stack: on by default; a private bucket, least privilege, alarms. */
import { describe, expect, it } from "vitest";
import {
  ACTIVITY_READ_CONDITION,
  actionsOf,
  logicalId,
  roleStatements,
  synthesize,
} from "./synth.js";

// Bundling skipped: these stacks are read for their resources and policies only.
const NO_BUNDLING = { "aws:cdk:bundling-stacks": [] };
const TOPIC = "arn:aws:sns:eu-west-1:123456789012:convoseg-digests";
const SECRET =
  "arn:aws:secretsmanager:eu-west-1:123456789012:secret:convoseg/digest-webhook-AbCdEf";

describe("the scheduled digest in the stack", () => {
  it("is not deployed with digest=false", () => {
    const { stack, template } = synthesize({ ...NO_BUNDLING, digest: "false" });
    expect(stack.digest).toBeUndefined();
    template.resourceCountIs("AWS::S3::Bucket", 0);
  });

  it("refuses a webhook secret or topic with digest=false, a bad topic, schedule or period", () => {
    const off = { ...NO_BUNDLING, digest: "false" };
    expect(() => synthesize({ ...off, digestSlackWebhookSecret: SECRET })).toThrow(
      /digestSlackWebhookSecret/,
    );
    expect(() => synthesize({ ...off, digestSnsTopic: TOPIC })).toThrow(/digestSnsTopic/);
    for (const bad of [
      `${TOPIC}.fifo`,
      "convoseg-digests",
      `${TOPIC}:sub-id`,
      "arn:aws:sns:*:*:x",
    ]) {
      expect(() => synthesize({ ...NO_BUNDLING, digestSnsTopic: bad })).toThrow(/digestSnsTopic/);
    }
    expect(() => synthesize({ ...NO_BUNDLING, digest: "true", digestSchedule: "weekly" })).toThrow(
      /digestSchedule/,
    );
    expect(() => synthesize({ ...NO_BUNDLING, digest: "true", digestPeriod: "32d" })).toThrow(
      /digestPeriod/,
    );
    expect(() =>
      synthesize({ ...NO_BUNDLING, digest: "true", digestSlackWebhookSecret: "https://hooks" }),
    ).toThrow(/the value is not shown/);
  });

  it("by default: weekly, a private encrypted versioned bucket, reads only, cdk-nag clean", () => {
    const { stack, template, report } = synthesize(NO_BUNDLING);
    const digest = stack.digest;
    expect(digest).toBeDefined();
    if (!digest) return;
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
    template.hasResourceProperties("AWS::Events::Rule", {
      ScheduleExpression: "cron(0 8 ? * MON *)",
    });
    template.hasResourceProperties("AWS::S3::Bucket", {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          { ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } },
        ],
      },
      VersioningConfiguration: { Status: "Enabled" },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
    });
    const bucketPolicy = JSON.stringify(template.findResources("AWS::S3::BucketPolicy"));
    expect(bucketPolicy).toContain('"aws:SecureTransport":"false"');
    const statements = roleStatements(template, logicalId(stack, digest.function.role));
    expect(statements.flatMap(actionsOf).sort()).toEqual(
      [
        "dynamodb:BatchGetItem",
        "dynamodb:GetItem",
        "dynamodb:GetItem",
        "dynamodb:Query",
        "dynamodb:Scan",
        "logs:CreateLogStream",
        "logs:PutLogEvents",
        "s3:PutObject",
      ].sort(),
    );
    const put = statements.find((s) => actionsOf(s).includes("s3:PutObject"));
    expect(JSON.stringify(put?.Resource)).toContain("/digests/*");
    const batch = statements.find((s) => actionsOf(s).includes("dynamodb:BatchGetItem"));
    expect(JSON.stringify(batch?.Resource)).toContain(logicalId(stack, stack.storage.messages));
    // Of each message only when, by whom and whether deleted: never the text (issue 39 §3).
    expect(batch?.Condition).toEqual(ACTIVITY_READ_CONDITION);
    const query = statements.find((s) => actionsOf(s).includes("dynamodb:Query"));
    expect(JSON.stringify(query?.Resource)).not.toContain(logicalId(stack, stack.storage.messages));
    const env = Object.values(template.findResources("AWS::Lambda::Function"))
      .map(
        (f) =>
          (f as { Properties: { Environment?: { Variables: Record<string, unknown> } } }).Properties
            .Environment?.Variables ?? {},
      )
      .find((v) => "DIGEST_BUCKET" in v && v.POWERTOOLS_SERVICE_NAME === "convoseg-digest");
    expect(env).toMatchObject({ DIGEST_PERIOD: String(7 * 86_400_000) });
    // Digests quote people: kept digestRetentionDays (90), a replaced version a day, and the
    // erasure may read and delete their versions, nothing else of the bucket.
    const bucket = Object.values(template.findResources("AWS::S3::Bucket"))[0] as {
      Properties: { LifecycleConfiguration: { Rules: Record<string, unknown>[] } };
    };
    expect(bucket.Properties.LifecycleConfiguration.Rules).toContainEqual(
      expect.objectContaining({
        ExpirationInDays: 90,
        NoncurrentVersionExpiration: { NoncurrentDays: 1 },
      }),
    );
    const erase = roleStatements(template, logicalId(stack, stack.erasure.function.role));
    const digestActions = erase.flatMap(actionsOf).filter((a) => a.startsWith("s3:"));
    expect(digestActions.sort()).toEqual(
      ["s3:DeleteObjectVersion", "s3:GetObjectVersion", "s3:ListBucketVersions"].sort(),
    );
    expect(env).not.toHaveProperty("SLACK_WEBHOOK_SECRET");
    expect(env).not.toHaveProperty("DIGEST_CHANNELS");
    expect(env).not.toHaveProperty("DIGEST_SNS_TOPIC");
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "Errors",
      Threshold: 0,
      AlarmName: "Test-DigestErrors",
    });
  });

  it("with a webhook secret: reads that secret only, and alarms on Slack failures", () => {
    const { stack, template, report } = synthesize({
      ...NO_BUNDLING,
      digest: "true",
      digestSchedule: "rate(1 day)",
      digestPeriod: "1d",
      digestChannels: "help,dev;C0GENERAL",
      digestSlackWebhookSecret: SECRET,
    });
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
    const digest = stack.digest;
    if (!digest) throw new Error("no digest");
    const statements = roleStatements(template, logicalId(stack, digest.function.role));
    const secret = statements.find((s) => actionsOf(s).includes("secretsmanager:GetSecretValue"));
    expect(secret?.Resource).toBe(SECRET);
    template.hasResourceProperties("AWS::Lambda::Function", {
      Environment: {
        Variables: {
          SLACK_WEBHOOK_SECRET: SECRET,
          DIGEST_CHANNELS: JSON.stringify([["help", "dev"], ["C0GENERAL"]]),
          DIGEST_PERIOD: "86400000",
        },
      },
    });
    template.hasResourceProperties("AWS::Events::Rule", { ScheduleExpression: "rate(1 day)" });
    const names = Object.values(template.findResources("AWS::CloudWatch::Alarm")).map((a) =>
      JSON.stringify((a as { Properties: { AlarmName?: unknown } }).Properties.AlarmName),
    );
    expect(names.some((n) => n.includes("-DigestSlackFailures"))).toBe(true);
    const policy = JSON.stringify(template.findResources("AWS::SNS::TopicPolicy"));
    expect(policy).toContain("-DigestSlackFailures");
    expect(policy).toContain("-DigestErrors");
  });

  it("with a topic: publishes to that topic only, and alarms on SNS failures", () => {
    const { stack, template, report } = synthesize({ ...NO_BUNDLING, digestSnsTopic: TOPIC });
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
    const digest = stack.digest;
    if (!digest) throw new Error("no digest");
    const statements = roleStatements(template, logicalId(stack, digest.function.role));
    const publish = statements.filter((s) => actionsOf(s).includes("sns:Publish"));
    expect(publish).toHaveLength(1);
    expect(actionsOf(publish[0])).toEqual(["sns:Publish"]);
    expect(publish[0].Resource).toBe(TOPIC);
    template.hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: { DIGEST_SNS_TOPIC: TOPIC } },
    });
    const policy = JSON.stringify(template.findResources("AWS::SNS::TopicPolicy"));
    expect(policy).toContain("-DigestSnsFailures");
  });
});
