import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Validations } from "aws-cdk-lib";
import { Match, type Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import type { ConvosegStack } from "../../infra/stack.js";
import { DEFAULT_MAX_BODY_BYTES, SEGMENT_DEFAULTS } from "../../lib/pipeline/index.js";
import {
  actionsOf,
  logicalId,
  roleStatements,
  type Statement,
  type Synthesized,
  statementsOf,
  synthesize,
} from "./synth.js";

let synthesized: Synthesized;
let template: Template;
let stack: ConvosegStack;
/** Logical ids of the resources the assertions refer to. */
let ids: Record<
  | "messages"
  | "channels"
  | "conversations"
  | "ingestFunction"
  | "ingestRole"
  | "ingestLogs"
  | "ingestQueue"
  | "ingestDlq"
  | "tickFunction"
  | "tickRole"
  | "tickLogs"
  | "segmentQueue"
  | "segmentDlq"
  | "scheduleDlq"
  | "topic"
  | "dashboard",
  string
>;

beforeAll(() => {
  synthesized = synthesize();
  ({ template, stack } = synthesized);
  const { storage, ingestion, segmentation, observability } = stack;
  ids = {
    messages: logicalId(stack, storage.messages),
    channels: logicalId(stack, storage.channels),
    conversations: logicalId(stack, storage.conversations),
    ingestFunction: logicalId(stack, ingestion.function.function),
    ingestRole: logicalId(stack, ingestion.function.role),
    ingestLogs: logicalId(stack, ingestion.function.logGroup),
    ingestQueue: logicalId(stack, ingestion.queue.queue),
    ingestDlq: logicalId(stack, ingestion.queue.deadLetterQueue),
    tickFunction: logicalId(stack, segmentation.function.function),
    tickRole: logicalId(stack, segmentation.function.role),
    tickLogs: logicalId(stack, segmentation.function.logGroup),
    segmentQueue: logicalId(stack, segmentation.segments.queue),
    segmentDlq: logicalId(stack, segmentation.segments.deadLetterQueue),
    scheduleDlq: logicalId(stack, segmentation.scheduleDeadLetterQueue),
    topic: logicalId(stack, observability.topic),
    dashboard: logicalId(stack, observability.dashboard),
  };
}, 120_000);

const arn = (id: string) => ({ "Fn::GetAtt": [id, "Arn"] });
const ref = (id: string) => ({ Ref: id });
const indexArn = (id: string, index: string) => ({
  "Fn::Join": ["", [arn(id), `/index/${index}`]],
});
const properties = (id: string) =>
  (template.toJSON().Resources[id] as { Properties: Record<string, unknown> }).Properties;

describe("storage", () => {
  it("declares the messages table as the history store expects it, and keeps its data", () => {
    template.hasResource("AWS::DynamoDB::Table", {
      DeletionPolicy: "Retain",
      UpdateReplacePolicy: "Retain",
      Properties: {
        BillingMode: "PAY_PER_REQUEST",
        DeletionProtectionEnabled: true,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        KeySchema: [
          { AttributeName: "conversation", KeyType: "HASH" },
          { AttributeName: "key", KeyType: "RANGE" },
        ],
        LocalSecondaryIndexes: [
          {
            IndexName: "byPosition",
            KeySchema: [
              { AttributeName: "conversation", KeyType: "HASH" },
              { AttributeName: "position", KeyType: "RANGE" },
            ],
            // What the tick reads of an arrival; a full copy would halve the largest message.
            Projection: { ProjectionType: "INCLUDE", NonKeyAttributes: ["id", "ts"] },
          },
        ],
        GlobalSecondaryIndexes: [
          Match.objectLike({
            IndexName: "conversations",
            KeySchema: [
              { AttributeName: "listed", KeyType: "HASH" },
              { AttributeName: "conversation", KeyType: "RANGE" },
            ],
            Projection: { ProjectionType: "KEYS_ONLY" },
          }),
        ],
      },
    });
  });

  it("declares the channels table with the sparse due index", () => {
    template.hasResourceProperties("AWS::DynamoDB::Table", {
      KeySchema: [
        { AttributeName: "channel", KeyType: "HASH" },
        { AttributeName: "item", KeyType: "RANGE" },
      ],
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      GlobalSecondaryIndexes: [
        Match.objectLike({
          IndexName: "due",
          KeySchema: [
            { AttributeName: "dueShard", KeyType: "HASH" },
            { AttributeName: "dueAt", KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "KEYS_ONLY" },
        }),
      ],
    });
  });

  it("keeps model conversations in a table of their own, with the messages schema", () => {
    expect(properties(ids.conversations)).toMatchObject({
      KeySchema: properties(ids.messages).KeySchema,
      LocalSecondaryIndexes: properties(ids.messages).LocalSecondaryIndexes,
    });
  });

  it("makes every table on-demand, encrypted, recoverable, retained and without TTL", () => {
    const tables = template.findResources("AWS::DynamoDB::Table");
    expect(Object.keys(tables).sort()).toEqual(
      [ids.channels, ids.messages, ids.conversations].sort(),
    );
    for (const table of Object.values(tables)) {
      expect(table).toMatchObject({
        DeletionPolicy: "Retain",
        Properties: {
          BillingMode: "PAY_PER_REQUEST",
          DeletionProtectionEnabled: true,
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          SSESpecification: { SSEEnabled: true },
        },
      });
      expect(table.Properties.TimeToLiveSpecification).toBeUndefined();
    }
  });
});

describe("functions", () => {
  it("runs ingestion on Node 22, arm64, pointed at the table", () => {
    template.hasResourceProperties("AWS::Lambda::Function", {
      Runtime: "nodejs22.x",
      Architectures: ["arm64"],
      Environment: {
        Variables: Match.objectLike({
          MESSAGES_TABLE: { Ref: Match.stringLikeRegexp("StorageMessages") },
        }),
      },
    });
  });

  it("runs both functions on Node 22, arm64, logging to their own log group kept 30 days", () => {
    for (const [fn, logs] of [
      [ids.ingestFunction, ids.ingestLogs],
      [ids.tickFunction, ids.tickLogs],
    ]) {
      expect(properties(fn)).toMatchObject({
        Runtime: "nodejs22.x",
        Architectures: ["arm64"],
        Handler: "index.handler",
        LoggingConfig: { LogGroup: ref(logs) },
      });
      expect(properties(logs)).toEqual({ RetentionInDays: 30 });
    }
    expect(Object.keys(template.findResources("AWS::Lambda::Function"))).toHaveLength(2);
  });

  it("bundles each handler as ESM with the createRequire banner, leaving the SDK to the runtime", () => {
    for (const fn of [ids.ingestFunction, ids.tickFunction]) {
      const key = (properties(fn).Code as { S3Key: string }).S3Key;
      const directory = join(synthesized.assembly.directory, `asset.${key.replace(".zip", "")}`);
      expect(readdirSync(directory).sort()).toEqual(["index.mjs", "index.mjs.map"]);
      const bundle = readFileSync(join(directory, "index.mjs"), "utf8");
      expect(bundle.startsWith("import { createRequire } from 'node:module';")).toBe(true);
      expect(bundle).toMatch(/from"@aws-sdk\/client-dynamodb"/);
      expect(bundle).not.toMatch(/DynamoDBServiceException extends/);
    }
  });

  it("configures the segmentation function exactly as readSegmentConfig reads it", () => {
    expect((properties(ids.tickFunction).Environment as { Variables: unknown }).Variables).toEqual({
      MESSAGES_TABLE: ref(ids.messages),
      CHANNELS_TABLE: ref(ids.channels),
      SEGMENT_QUEUE_URL: ref(ids.segmentQueue),
      SEGMENT_QUEUE_FIFO: "true",
      MAX_SIZE: "500",
      SETTLE: "86400000",
      MIN_ITEMS: "1",
      GRACE: "60000",
      MAX_ARRIVALS_PER_CHANNEL: SEGMENT_DEFAULTS.MAX_ARRIVALS_PER_CHANNEL,
      LEASE: "270000",
      HOLD_TIMEOUT: SEGMENT_DEFAULTS.HOLD_TIMEOUT,
      CHANNEL_CONCURRENCY: SEGMENT_DEFAULTS.CHANNEL_CONCURRENCY,
      MAX_BODY_BYTES: String(DEFAULT_MAX_BODY_BYTES),
      BUDGET_MARGIN: "20000",
      NODE_OPTIONS: "--enable-source-maps",
    });
  });

  it("gives the tick a timeout inside its 5-minute period, one run at a time, no retries", () => {
    expect(properties(ids.tickFunction)).toMatchObject({
      Timeout: 270,
      ReservedConcurrentExecutions: 1,
      MemorySize: 512,
    });
    template.hasResourceProperties("AWS::Lambda::EventInvokeConfig", {
      FunctionName: ref(ids.tickFunction),
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 300,
    });
  });

  it("configures ingestion with its tables", () => {
    expect(
      (properties(ids.ingestFunction).Environment as { Variables: unknown }).Variables,
    ).toEqual({
      MESSAGES_TABLE: ref(ids.messages),
      CHANNELS_TABLE: ref(ids.channels),
      POWERTOOLS_SERVICE_NAME: "convoseg-ingest",
      NODE_OPTIONS: "--enable-source-maps",
    });
  });
});

describe("IAM", () => {
  const allows = () =>
    [
      ...statementsOf(template, "AWS::IAM::Policy"),
      ...statementsOf(template, "AWS::IAM::ManagedPolicy"),
      ...statementsOf(template, "AWS::SQS::QueuePolicy"),
      ...statementsOf(template, "AWS::SNS::TopicPolicy"),
    ].filter((s) => s.Effect === "Allow");

  it("allows no wildcard action, and no wildcard resource", () => {
    for (const statement of allows()) {
      for (const action of actionsOf(statement)) expect(action).not.toContain("*");
      expect(JSON.stringify(statement.Resource)).not.toContain("*");
    }
  });

  it("attaches no AWS managed policy to the function roles", () => {
    for (const role of Object.values(template.findResources("AWS::IAM::Role"))) {
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  /** Ingestion's grant on the channels table: marking attributes only, no other values back. */
  const markingStatement = (channels: string): Statement => ({
    Effect: "Allow",
    Action: "dynamodb:UpdateItem",
    Resource: arn(channels),
    Condition: {
      "ForAllValues:StringLike": {
        "dynamodb:Attributes": ["channel", "item", "seq", "h*", "marks", "dueShard", "dueAt"],
      },
      StringEqualsIfExists: { "dynamodb:ReturnValues": ["NONE", "UPDATED_NEW"] },
    },
  });

  it("lets ingestion only put messages and mark channels: no wildcards, reads or deletes", () => {
    const statements = roleStatements(template, ids.ingestRole);
    const dynamodb = statements.flatMap(actionsOf).filter((a) => a.startsWith("dynamodb:"));
    expect(dynamodb).toEqual(["dynamodb:PutItem", "dynamodb:UpdateItem"]);
    expect(statements).toEqual([
      logsStatement(ids.ingestLogs),
      { Effect: "Allow", Action: "dynamodb:PutItem", Resource: arn(ids.messages) },
      markingStatement(ids.channels),
      {
        Effect: "Allow",
        Action: [
          "sqs:ReceiveMessage",
          "sqs:ChangeMessageVisibility",
          "sqs:GetQueueUrl",
          "sqs:DeleteMessage",
          "sqs:GetQueueAttributes",
        ],
        Resource: arn(ids.ingestQueue),
      },
    ]);
  });

  it("never lets the marking grant touch the tick's state, read position or outbox", () => {
    const allowed = (
      markingStatement(ids.channels).Condition as Record<string, Record<string, string[]>>
    )["ForAllValues:StringLike"]["dynamodb:Attributes"];
    const matches = (name: string) =>
      allowed.some((pattern) => new RegExp(`^${pattern.replace("*", ".*")}$`).test(name));
    for (const attribute of ["version", "state", "pages", "lease", "recordId", "delivered"]) {
      expect(matches(attribute), attribute).toBe(false);
    }
  });

  it("gives the segmentation role exactly what a tick does", () => {
    expect(roleStatements(template, ids.tickRole)).toEqual([
      logsStatement(ids.tickLogs),
      {
        Effect: "Allow",
        Action: "dynamodb:Query",
        Resource: indexArn(ids.messages, "byPosition"),
      },
      { Effect: "Allow", Action: "dynamodb:BatchGetItem", Resource: arn(ids.messages) },
      {
        Effect: "Allow",
        Action: [
          "dynamodb:Query",
          "dynamodb:UpdateItem",
          "dynamodb:PutItem",
          "dynamodb:DeleteItem",
        ],
        Resource: arn(ids.channels),
      },
      { Effect: "Allow", Action: "dynamodb:Query", Resource: indexArn(ids.channels, "due") },
      { Effect: "Allow", Action: "sqs:SendMessage", Resource: arn(ids.segmentQueue) },
    ]);
  });

  it("gives no function any access to the model conversations table", () => {
    for (const role of [ids.ingestRole, ids.tickRole]) {
      expect(JSON.stringify(roleStatements(template, role))).not.toContain(ids.conversations);
    }
    expect(JSON.stringify(statementsOf(template, "AWS::IAM::ManagedPolicy"))).not.toContain(
      ids.conversations,
    );
  });

  it("lets only the tick's role send to the segment queue", () => {
    template.hasResourceProperties("AWS::SQS::QueuePolicy", {
      Queues: [ref(ids.segmentQueue)],
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Effect: "Deny",
            Principal: { AWS: "*" },
            Action: "sqs:SendMessage",
            Resource: arn(ids.segmentQueue),
            Condition: { ArnNotEquals: { "aws:PrincipalArn": [arn(ids.tickRole)] } },
          },
        ]),
      },
    });
  });

  it("grants CloudWatch the alarm key only for this account", () => {
    const keys = Object.values(template.findResources("AWS::KMS::Key"));
    expect(keys).toHaveLength(1);
    const statements = keys[0].Properties.KeyPolicy.Statement as Statement[];
    const service = statements.filter(
      (s) => (s.Principal as { Service?: string })?.Service === "cloudwatch.amazonaws.com",
    );
    expect(service).toHaveLength(1);
    expect(service[0].Condition).toEqual({
      StringEquals: { "aws:SourceAccount": { Ref: "AWS::AccountId" } },
    });
  });

  it("exports a managed policy with ingestion's table statements, for other stacks", () => {
    expect(statementsOf(template, "AWS::IAM::ManagedPolicy")).toEqual([
      { Effect: "Allow", Action: "dynamodb:PutItem", Resource: arn(ids.messages) },
      markingStatement(ids.channels),
    ]);
    template.hasOutput("IngestPolicyArn", {
      Value: ref(logicalId(stack, stack.ingestPolicy)),
      Export: { Name: "Test-IngestPolicyArn" },
    });
  });
});

const logsStatement = (logs: string): Statement => ({
  Effect: "Allow",
  Action: ["logs:CreateLogStream", "logs:PutLogEvents"],
  Resource: arn(logs),
});

describe("queues", () => {
  it("encrypts every queue and refuses requests without TLS", () => {
    const queues = template.findResources("AWS::SQS::Queue");
    expect(Object.keys(queues)).toHaveLength(5);
    for (const [id, queue] of Object.entries(queues)) {
      expect(queue.Properties).toMatchObject({
        SqsManagedSseEnabled: true,
        MessageRetentionPeriod: 14 * 24 * 3600,
      });
      template.hasResourceProperties("AWS::SQS::QueuePolicy", {
        Queues: [ref(id)],
        PolicyDocument: {
          Statement: Match.arrayWith([
            {
              Effect: "Deny",
              Principal: { AWS: "*" },
              Action: "sqs:*",
              Condition: { Bool: { "aws:SecureTransport": "false" } },
              Resource: arn(id),
            },
          ]),
        },
      });
    }
  });

  it("sends segments to a FIFO queue sized to the body limit, with a FIFO dead-letter queue", () => {
    const queue = properties(ids.segmentQueue);
    expect(queue).toMatchObject({
      FifoQueue: true,
      MaximumMessageSize: DEFAULT_MAX_BODY_BYTES,
      RedrivePolicy: { deadLetterTargetArn: arn(ids.segmentDlq), maxReceiveCount: 5 },
    });
    // The sender sets deduplication ids (the segment id); bodies are not the identity.
    expect(queue.ContentBasedDeduplication).toBeUndefined();
    expect(properties(ids.segmentDlq)).toMatchObject({ FifoQueue: true });
  });

  it("feeds ingestion from a standard queue with partial batch failures and its own DLQ", () => {
    expect(properties(ids.ingestQueue)).toMatchObject({
      VisibilityTimeout: 180,
      RedrivePolicy: { deadLetterTargetArn: arn(ids.ingestDlq), maxReceiveCount: 5 },
    });
    expect(properties(ids.ingestQueue).FifoQueue).toBeUndefined();
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      EventSourceArn: arn(ids.ingestQueue),
      FunctionName: ref(ids.ingestFunction),
      FunctionResponseTypes: ["ReportBatchItemFailures"],
    });
  });
});

describe("schedule", () => {
  it("ticks every 5 minutes, retrying delivery and dead-lettering what it cannot deliver", () => {
    template.hasResourceProperties("AWS::Events::Rule", {
      ScheduleExpression: "rate(5 minutes)",
      State: "ENABLED",
      Targets: [
        Match.objectLike({
          Arn: arn(ids.tickFunction),
          RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 300 },
          DeadLetterConfig: { Arn: arn(ids.scheduleDlq) },
        }),
      ],
    });
    template.hasResourceProperties("AWS::SQS::QueuePolicy", {
      Queues: [ref(ids.scheduleDlq)],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: "Allow",
            Principal: { Service: "events.amazonaws.com" },
            Action: "sqs:SendMessage",
          }),
        ]),
      },
    });
  });
});

describe("alarms", () => {
  const alarm = (name: string) => {
    const found = Object.values(
      template.findResources("AWS::CloudWatch::Alarm", {
        Properties: { AlarmName: `Test-${name}` },
      }),
    );
    expect(found).toHaveLength(1);
    return found[0].Properties;
  };
  const notifies = () => ({ AlarmActions: [ref(ids.topic)], OKActions: [ref(ids.topic)] });
  const above = (threshold: number, periods = 1) => ({
    Threshold: threshold,
    ComparisonOperator: "GreaterThanThreshold",
    EvaluationPeriods: periods,
    TreatMissingData: "notBreaching",
    ...notifies(),
  });

  it("has exactly the documented alarms, each notifying the topic", () => {
    const names = Object.values(template.findResources("AWS::CloudWatch::Alarm")).map(
      (a) => a.Properties.AlarmName,
    );
    expect(names.sort()).toEqual(
      [
        "ArrivalsBehindReadPosition",
        "ChannelErrors",
        "ChannelStateLarge",
        "IngestDeadLetters",
        "IngestErrors",
        "IngestThrottles",
        "OldestDueChannel",
        "ScheduleDeadLetters",
        "SegmentDeadLetters",
        "TickErrors",
        "TickThrottles",
        "TicksMissing",
        "TicksStoppedEarly",
      ].map((n) => `Test-${n}`),
    );
  });

  it.each([
    ["SegmentDeadLetters", "segmentDlq"],
    ["IngestDeadLetters", "ingestDlq"],
    ["ScheduleDeadLetters", "scheduleDlq"],
  ] as const)("%s fires on any message in the dead-letter queue", (name, queue) => {
    expect(alarm(name)).toMatchObject({
      Namespace: "AWS/SQS",
      MetricName: "ApproximateNumberOfMessagesVisible",
      Dimensions: [{ Name: "QueueName", Value: { "Fn::GetAtt": [ids[queue], "QueueName"] } }],
      Statistic: "Maximum",
      Period: 300,
      ...above(0),
    });
  });

  it.each([
    ["TickErrors", "Errors", "tickFunction"],
    ["TickThrottles", "Throttles", "tickFunction"],
    ["IngestErrors", "Errors", "ingestFunction"],
    ["IngestThrottles", "Throttles", "ingestFunction"],
  ] as const)("%s fires on any %s of the function", (name, metric, fn) => {
    expect(alarm(name)).toMatchObject({
      Namespace: "AWS/Lambda",
      MetricName: metric,
      Dimensions: [{ Name: "FunctionName", Value: ref(ids[fn]) }],
      Statistic: "Sum",
      Period: 300,
      ...above(0),
    });
  });

  const tickMetric = (metric: string, statistic = "Sum") => ({
    Namespace: "convoseg",
    MetricName: metric,
    Dimensions: [{ Name: "service", Value: "segmenter" }],
    Statistic: statistic,
    Period: 300,
  });

  it("ChannelErrors fires on any channel failing in a tick", () => {
    expect(alarm("ChannelErrors")).toMatchObject({ ...tickMetric("ChannelErrors"), ...above(0) });
  });

  it("TicksStoppedEarly fires when three ticks in a row ran out of budget", () => {
    expect(alarm("TicksStoppedEarly")).toMatchObject({
      ...tickMetric("TicksStoppedEarly"),
      ...above(0, 3),
    });
  });

  it("OldestDueChannel fires when a channel waited longer than two periods and a tick", () => {
    expect(alarm("OldestDueChannel")).toMatchObject({
      ...tickMetric("OldestDueAgeMs", "Maximum"),
      Threshold: 2 * 5 * 60_000 + 270_000,
      ComparisonOperator: "GreaterThanThreshold",
      ...notifies(),
    });
  });

  it("TicksMissing fires when no tick finished in three periods, missing data included", () => {
    expect(alarm("TicksMissing")).toMatchObject({
      ...tickMetric("TickDurationMs", "SampleCount"),
      Threshold: 1,
      ComparisonOperator: "LessThanThreshold",
      EvaluationPeriods: 3,
      TreatMissingData: "breaching",
      ...notifies(),
    });
  });

  it("publishes to a topic encrypted with a rotated key, over TLS only, that CloudWatch may use", () => {
    const key = (properties(ids.topic).KmsMasterKeyId as { "Fn::GetAtt": [string, string] })[
      "Fn::GetAtt"
    ][0];
    expect(properties(key)).toMatchObject({ EnableKeyRotation: true });
    expect(statementsOf(template, "AWS::KMS::Key")).toContainEqual({
      Effect: "Allow",
      Principal: { Service: "cloudwatch.amazonaws.com" },
      Action: ["kms:Decrypt", "kms:GenerateDataKey"],
      Resource: "*",
      Condition: { StringEquals: { "aws:SourceAccount": { Ref: "AWS::AccountId" } } },
    });
    const topicPolicy = statementsOf(template, "AWS::SNS::TopicPolicy");
    expect(topicPolicy).toContainEqual(
      expect.objectContaining({
        Effect: "Deny",
        Action: "sns:Publish",
        Condition: { Bool: { "aws:SecureTransport": "false" } },
      }),
    );
    expect(topicPolicy).toContainEqual(
      expect.objectContaining({
        Effect: "Allow",
        Principal: { Service: "cloudwatch.amazonaws.com" },
        Action: "sns:Publish",
        Resource: ref(ids.topic),
      }),
    );
    template.resourceCountIs("AWS::SNS::Subscription", 0);
  });

  it("draws a dashboard of the tick metrics, the functions and the queues", () => {
    const body = JSON.stringify(properties(ids.dashboard).DashboardBody);
    for (const metric of [
      "ChannelsProcessed",
      "SegmentsEmitted",
      "MessagesSegmented",
      "LateMessages",
      "DroppedMessages",
      "ChannelErrors",
      "TickDurationMs",
      "TicksStoppedEarly",
      "ApproximateAgeOfOldestMessage",
      "Throttles",
    ]) {
      expect(body).toContain(metric);
    }
  });
});

describe("outputs", () => {
  it("gives the queue, tables, dashboard and topic, exporting what other stacks import", () => {
    expect(template.toJSON().Outputs).toMatchObject({
      MessagesTableName: {
        Value: ref(ids.messages),
        Export: { Name: "Test-MessagesTableName" },
      },
      ChannelsTableName: {
        Value: ref(ids.channels),
        Export: { Name: "Test-ChannelsTableName" },
      },
      SegmentQueueUrl: { Value: ref(ids.segmentQueue) },
      SegmentQueueArn: { Value: arn(ids.segmentQueue) },
      IngestQueueUrl: { Value: ref(ids.ingestQueue) },
      IngestFunctionName: { Value: ref(ids.ingestFunction) },
      AlarmTopicArn: { Value: ref(ids.topic) },
      DashboardUrl: {
        Value: {
          "Fn::Join": [
            "",
            [
              "https://console.aws.amazon.com/cloudwatch/home?region=",
              { Ref: "AWS::Region" },
              "#dashboards:name=",
              ref(ids.dashboard),
            ],
          ],
        },
      },
    });
  });
});

describe("cdk-nag AwsSolutions", () => {
  it("reports no unacknowledged error or warning", () => {
    const findings = synthesized.report.pluginReports.flatMap((report) =>
      report.violations.map((v) => `${report.pluginName} ${v.severity} ${v.ruleName}`),
    );
    expect(findings).toEqual([]);
  });

  it("acknowledges only the expected findings, each with a reason", () => {
    const acknowledged = stack.node.findAll().flatMap((construct) =>
      construct.node.metadata
        .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((entry) =>
          Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
            path: construct.node.path,
            id,
            reason,
          })),
        ),
    );
    expect(acknowledged.map(({ path, id }) => `${path} ${id}`).sort()).toEqual([
      "Test/Ingestion/Ingest/Function Annotation::AwsSolutions-L1",
      "Test/Segmentation/ScheduleDeadLetters Annotation::AwsSolutions-SQS3",
      "Test/Segmentation/Tick/Function Annotation::AwsSolutions-L1",
    ]);
    for (const { reason } of acknowledged) expect(reason.length).toBeGreaterThan(40);
  });

  it("leaves no warning or error annotation", () => {
    // Read from the assembly already built: Annotations.fromStack would synthesize (bundle) again.
    const messages = synthesized.assembly.getStackArtifact(stack.artifactId).messages;
    expect(messages.filter((m) => m.level !== "info")).toEqual([]);
  });
});
