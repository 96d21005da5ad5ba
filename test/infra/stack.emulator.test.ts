import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Validations } from "aws-cdk-lib";
import { Match, type Template } from "aws-cdk-lib/assertions";
import type { IConstruct } from "constructs";
import { EXTRACT_DEFAULTS } from "convoseg/knowledge/config";
import { SEGMENT_DEFAULTS } from "convoseg/pipeline";
import { DEFAULT_MAX_BODY_BYTES } from "convoseg/pipeline/contract";
import { beforeAll, describe, expect, it } from "vitest";
import type { ConvosegStack } from "../../infra/stack.js";
import {
  actionsOf,
  logicalId,
  modelArn,
  partitionArn,
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
  | "results"
  | "ingestFunction"
  | "ingestRole"
  | "ingestLogs"
  | "ingestQueue"
  | "ingestDlq"
  | "tickFunction"
  | "tickRole"
  | "tickLogs"
  | "extractFunction"
  | "extractRole"
  | "extractLogs"
  | "countFunction"
  | "countRole"
  | "countLogs"
  | "countFailures"
  | "eraseFunction"
  | "eraseRole"
  | "eraseLogs"
  | "segmentQueue"
  | "segmentDlq"
  | "scheduleDlq"
  | "topic"
  | "dashboard",
  string
>;

beforeAll(() => {
  // The core stack: the scheduled digest (on by default) and its bucket's one prefix wildcard
  // are tested, cdk-nag included, in digest-stack.test.ts.
  synthesized = synthesize({ digest: "false" });
  ({ template, stack } = synthesized);
  const { storage, ingestion, segmentation, extraction, observability, erasure } = stack;
  ids = {
    messages: logicalId(stack, storage.messages),
    channels: logicalId(stack, storage.channels),
    conversations: logicalId(stack, storage.conversations),
    results: logicalId(stack, storage.results),
    ingestFunction: logicalId(stack, ingestion.function.function),
    ingestRole: logicalId(stack, ingestion.function.role),
    ingestLogs: logicalId(stack, ingestion.function.logGroup),
    ingestQueue: logicalId(stack, ingestion.queue.queue),
    ingestDlq: logicalId(stack, ingestion.queue.deadLetterQueue),
    tickFunction: logicalId(stack, segmentation.function.function),
    tickRole: logicalId(stack, segmentation.function.role),
    tickLogs: logicalId(stack, segmentation.function.logGroup),
    extractFunction: logicalId(stack, extraction.function.function),
    extractRole: logicalId(stack, extraction.function.role),
    extractLogs: logicalId(stack, extraction.function.logGroup),
    countFunction: logicalId(stack, ingestion.counter.function),
    countRole: logicalId(stack, ingestion.counter.role),
    countLogs: logicalId(stack, ingestion.counter.logGroup),
    countFailures: logicalId(stack, ingestion.countFailures),
    eraseFunction: logicalId(stack, erasure.function.function),
    eraseRole: logicalId(stack, erasure.function.role),
    eraseLogs: logicalId(stack, erasure.function.logGroup),
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

/** The condition that holds CloudWatch to this stack's alarms: each one's ARN, this account. */
const ownAlarms = () => ({
  ArnEquals: {
    "aws:SourceArn": Object.values(template.findResources("AWS::CloudWatch::Alarm")).map((a) =>
      partitionArn(
        ":cloudwatch:",
        { Ref: "AWS::Region" },
        ":",
        { Ref: "AWS::AccountId" },
        `:alarm:${a.Properties.AlarmName}`,
      ),
    ),
  },
  StringEquals: { "aws:SourceAccount": { Ref: "AWS::AccountId" } },
});

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
          // An erasure's way to a person's messages, by a hash of the author (no name as key).
          Match.objectLike({
            IndexName: "byAuthor",
            KeySchema: [
              { AttributeName: "authorKey", KeyType: "HASH" },
              { AttributeName: "conversation", KeyType: "RANGE" },
            ],
            // The time finds a message's results without reading the message.
            Projection: { ProjectionType: "INCLUDE", NonKeyAttributes: ["ts"] },
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

  it("declares the results table with the knowledge library's keys and TTL attribute", () => {
    expect(properties(ids.results)).toEqual({
      AttributeDefinitions: [
        { AttributeName: "channel", AttributeType: "S" },
        { AttributeName: "item", AttributeType: "S" },
      ],
      KeySchema: [
        { AttributeName: "channel", KeyType: "HASH" },
        { AttributeName: "item", KeyType: "RANGE" },
      ],
      BillingMode: "PAY_PER_REQUEST",
      DeletionProtectionEnabled: true,
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      // Window replies and lapsed leases expire; results and topic entries with a retention.
      TimeToLiveSpecification: { AttributeName: "expiresAt", Enabled: true },
    });
    expect(template.toJSON().Resources[ids.results]).toMatchObject({
      DeletionPolicy: "Retain",
      UpdateReplacePolicy: "Retain",
    });
  });

  it("makes every table on-demand, encrypted, recoverable and retained; messages and results have a TTL", () => {
    const tables = template.findResources("AWS::DynamoDB::Table");
    expect(Object.keys(tables).sort()).toEqual(
      [ids.channels, ids.messages, ids.conversations, ids.results].sort(),
    );
    for (const [id, table] of Object.entries(tables)) {
      expect(table).toMatchObject({
        DeletionPolicy: "Retain",
        Properties: {
          BillingMode: "PAY_PER_REQUEST",
          DeletionProtectionEnabled: true,
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          SSESpecification: { SSEEnabled: true },
        },
      });
      // Messages carry expiresAt only with a retention; the TTL is there so setting one later
      // changes no table.
      const ttl = id === ids.results || id === ids.messages;
      expect(table.Properties.TimeToLiveSpecification).toEqual(
        ttl ? { AttributeName: "expiresAt", Enabled: true } : undefined,
      );
    }
  });
});

describe("limits", () => {
  it("caps ingestion and every table's on-demand throughput as configured; passes the retentions", () => {
    const { template: limited, stack: limitedStack } = synthesize(
      { "aws:cdk:bundling-stacks": [] },
      {
        ingestConcurrency: 10,
        ingestMaxBatch: 50,
        changeHoldHours: 6,
        tableMaxReadUnits: 4000,
        tableMaxWriteUnits: 800,
        messageRetentionDays: 30,
        resultRetentionDays: 7,
      },
    );
    const tables = Object.values(limited.findResources("AWS::DynamoDB::Table"));
    expect(tables).toHaveLength(4);
    for (const table of tables) {
      expect(table.Properties.OnDemandThroughput).toEqual({
        MaxReadRequestUnits: 4000,
        MaxWriteRequestUnits: 800,
      });
    }
    const fn = logicalId(limitedStack, limitedStack.ingestion.function.function);
    limited.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      FunctionName: ref(fn),
      ScalingConfig: { MaximumConcurrency: 10 },
    });
    limited.hasResourceProperties("AWS::Lambda::Function", {
      Environment: {
        Variables: Match.objectLike({
          MAX_BATCH: "50",
          CHANGE_HOLD_HOURS: "6",
          MESSAGE_RETENTION_DAYS: "30",
        }),
      },
    });
    limited.hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: Match.objectLike({ RESULT_RETENTION_DAYS: "7" }) },
    });
  });

  it("sets no throughput ceiling by default", () => {
    for (const table of Object.values(template.findResources("AWS::DynamoDB::Table"))) {
      expect(table.Properties.OnDemandThroughput).toBeUndefined();
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

  it("runs every function on Node 22, arm64, logging to their own log group kept 30 days", () => {
    for (const [fn, logs] of [
      [ids.ingestFunction, ids.ingestLogs],
      [ids.tickFunction, ids.tickLogs],
      [ids.extractFunction, ids.extractLogs],
      [ids.eraseFunction, ids.eraseLogs],
      [ids.countFunction, ids.countLogs],
    ]) {
      expect(properties(fn)).toMatchObject({
        Runtime: "nodejs22.x",
        Architectures: ["arm64"],
        Handler: "index.handler",
        LoggingConfig: { LogGroup: ref(logs) },
      });
      expect(properties(logs)).toEqual({ RetentionInDays: 30 });
    }
    expect(Object.keys(template.findResources("AWS::Lambda::Function"))).toHaveLength(5);
  });

  it("bundles each handler as ESM with the createRequire banner, leaving the SDK to the runtime", () => {
    for (const fn of [
      ids.ingestFunction,
      ids.tickFunction,
      ids.extractFunction,
      ids.eraseFunction,
    ]) {
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
      DUE_SHARDS: "4",
      PREVIOUS_DUE_SHARDS: "0",
      WORKERS: "1",
      CONVERSATIONS: "linked",
      ASK_LINKS: "false",
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
      RESULTS_TABLE: ref(ids.results),
      DUE_SHARDS: "4",
      MAX_BATCH: "500",
      CHANGE_HOLD_HOURS: "24",
      POWERTOOLS_SERVICE_NAME: "convoseg-ingest",
      NODE_OPTIONS: "--enable-source-maps",
      // Redaction sends a segment back past the share (lib/knowledge/write/reextraction.ts).
      SEGMENT_QUEUE_URL: ref(ids.segmentQueue),
      REEXTRACT_CHANGED_SHARE: EXTRACT_DEFAULTS.REEXTRACT_CHANGED_SHARE,
      // The ingest queue's producers: every channel, adding only (docs/security.md).
      PRODUCERS: expect.objectContaining({ "Fn::Join": expect.any(Array) }),
    });
  });

  it("passes reextractChangedShare to ingestion as to extraction", () => {
    const { template: shared, stack: sharedStack } = synthesize(
      { "aws:cdk:bundling-stacks": [] },
      { reextractChangedShare: 0.5 },
    );
    const share = (fn: IConstruct) =>
      shared.toJSON().Resources[logicalId(sharedStack, fn)].Properties.Environment.Variables
        .REEXTRACT_CHANGED_SHARE;
    expect(share(sharedStack.ingestion.function.function)).toBe("0.5");
    expect(share(sharedStack.extraction.function.function)).toBe("0.5");
  });
});

describe("extraction", () => {
  /** The default route's windows of the largest segment, 4 at a time, 2 x 120 s each, + 30 s. */
  const timeoutS = Math.min(
    900,
    Math.ceil(
      Math.ceil(
        (500 - Number(EXTRACT_DEFAULTS.OVERLAP)) /
          (Number(EXTRACT_DEFAULTS.WINDOW_SIZE) - Number(EXTRACT_DEFAULTS.OVERLAP)),
      ) / Number(EXTRACT_DEFAULTS.LLM_CONCURRENCY),
    ) *
      240 +
      30,
  );

  it("runs on Node 22, arm64, with a timeout sized for the largest segment's windows", () => {
    expect(EXTRACT_DEFAULTS.ROUTE).toBe("sliding");
    expect(properties(ids.extractFunction)).toMatchObject({
      Runtime: "nodejs22.x",
      Architectures: ["arm64"],
      Handler: "index.handler",
      Timeout: timeoutS,
      MemorySize: 512,
    });
    expect(properties(ids.extractFunction).Timeout).toBe(stack.config.extract.timeoutMs / 1000);
    // Its concurrency is the event source's to limit: nothing reserved.
    expect(properties(ids.extractFunction).ReservedConcurrentExecutions).toBeUndefined();
  });

  it("configures the function exactly as readExtractConfig reads it, its lease the timeout", () => {
    expect(
      (properties(ids.extractFunction).Environment as { Variables: unknown }).Variables,
    ).toEqual({
      ...EXTRACT_DEFAULTS,
      RESULTS_TABLE: ref(ids.results),
      MESSAGES_TABLE: ref(ids.messages),
      EXTRACTOR: "bedrock",
      MODEL_ID: "amazon.nova-lite-v1:0",
      LEASE: String(timeoutS * 1000),
      // Durations in milliseconds, as the settings give them.
      LLM_DEADLINE: "120000",
      BREAKER_COOLDOWN: "300000",
      DEAD_LETTER_QUEUE_URL: { Ref: ids.segmentDlq },
      // Its redaction of a change during an extraction asks for re-extractions too.
      SEGMENT_QUEUE_URL: { Ref: ids.segmentQueue },
      NODE_OPTIONS: "--enable-source-maps",
    });
  });

  it("consumes the segment queue in small batches, reporting partial failures, at most 2 at once", () => {
    expect(
      Object.values(
        template.findResources("AWS::Lambda::EventSourceMapping", {
          Properties: { FunctionName: ref(ids.extractFunction) },
        }),
      ).map((mapping) => mapping.Properties),
    ).toEqual([
      {
        EventSourceArn: arn(ids.segmentQueue),
        FunctionName: ref(ids.extractFunction),
        BatchSize: 5,
        FunctionResponseTypes: ["ReportBatchItemFailures"],
        ScalingConfig: { MaximumConcurrency: 2 },
      },
    ]);
  });

  it("gives the segment queue a visibility timeout of six times the function's timeout", () => {
    expect(properties(ids.segmentQueue).VisibilityTimeout).toBe(
      6 * (properties(ids.extractFunction).Timeout as number),
    );
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
    // But for the erasure loop's log delivery and X-Ray, which take none (test/infra/erasure.emulator.test.ts),
    // and the counter's stream source's ListStreams, which takes none either.
    const loop = roleStatements(template, logicalId(stack, stack.erasure.stateMachineRole));
    const unscoped = loop.filter((s) => s.Resource === "*").map((s) => JSON.stringify(s));
    expect(unscoped.length).toBeGreaterThan(0);
    const listStreams = roleStatements(template, ids.countRole).filter((s) => s.Resource === "*");
    expect(listStreams.flatMap(actionsOf)).toEqual(["dynamodb:ListStreams"]);
    unscoped.push(...listStreams.map((s) => JSON.stringify(s)));
    for (const statement of allows().filter((s) => !unscoped.includes(JSON.stringify(s)))) {
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

  // Edits and deletions: a message's content attributes, and nothing else of it.
  const changeStatement = (messages: string): Statement => ({
    Effect: "Allow",
    Action: "dynamodb:UpdateItem",
    Resource: arn(messages),
    Condition: {
      "ForAllValues:StringLike": {
        "dynamodb:Attributes": [
          "conversation",
          "key",
          "position",
          "parts",
          "author",
          "userId",
          "authorKey",
          "metadata",
          "channelName",
          "editedAt",
          "deleted",
          "pending",
        ],
      },
      StringEqualsIfExists: { "dynamodb:ReturnValues": ["NONE", "ALL_OLD"] },
    },
  });

  it("lets ingestion only put, edit and delete messages, mark channels, redact results and ask for re-extractions: no wildcards", () => {
    const statements = roleStatements(template, ids.ingestRole);
    expect(statements).toEqual([
      logsStatement(ids.ingestLogs),
      { Effect: "Allow", Action: "dynamodb:PutItem", Resource: arn(ids.messages) },
      changeStatement(ids.messages),
      markingStatement(ids.channels),
      // Following a change into what was learned (KnowledgeRedactor): by key, no scans.
      { Effect: "Allow", Action: "dynamodb:BatchGetItem", Resource: arn(ids.messages) },
      {
        Effect: "Allow",
        Action: [
          "dynamodb:GetItem",
          "dynamodb:Query",
          "dynamodb:PutItem",
          "dynamodb:UpdateItem",
          "dynamodb:DeleteItem",
          "dynamodb:BatchWriteItem",
        ],
        Resource: arn(ids.results),
      },
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
      // Asking for a re-extraction past reextractChangedShare: the segment queue, not its DLQ.
      { Effect: "Allow", Action: "sqs:SendMessage", Resource: arn(ids.segmentQueue) },
    ]);
  });

  it("lets the message counter read its stream and only read and count the channels' marks", () => {
    const count = {
      "ForAllValues:StringEquals": {
        "dynamodb:Attributes": ["channel", "item", "messages", "countedTo"],
      },
    };
    expect(roleStatements(template, ids.countRole)).toEqual([
      logsStatement(ids.countLogs),
      {
        Effect: "Allow",
        Action: "dynamodb:GetItem",
        Resource: arn(ids.channels),
        Condition: {
          ...count,
          StringEqualsIfExists: { "dynamodb:Select": "SPECIFIC_ATTRIBUTES" },
        },
      },
      {
        Effect: "Allow",
        Action: "dynamodb:UpdateItem",
        Resource: arn(ids.channels),
        Condition: { ...count, StringEqualsIfExists: { "dynamodb:ReturnValues": "NONE" } },
      },
      {
        Effect: "Allow",
        Action: ["sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"],
        Resource: arn(ids.countFailures),
      },
      expect.objectContaining({ Action: "dynamodb:ListStreams", Resource: "*" }),
      {
        Effect: "Allow",
        Action: ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"],
        Resource: { "Fn::GetAtt": [ids.messages, "StreamArn"] },
      },
    ]);
  });

  /** Every Allow statement of the template with a DynamoDB write, and whose policy it is in. */
  const tableWrites = () => {
    const writes = /^dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem|\*)$/;
    return (["AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"] as const).flatMap((type) =>
      Object.values(template.findResources(type)).flatMap((policy) => {
        const { PolicyDocument, Roles } = policy.Properties as {
          PolicyDocument: { Statement: Statement[] };
          Roles?: { Ref: string }[];
        };
        return PolicyDocument.Statement.filter(
          (st) => st.Effect === "Allow" && actionsOf(st).some((a) => writes.test(a)),
        ).map((st) => ({ type, roles: (Roles ?? []).map((r) => r.Ref), resource: st.Resource }));
      }),
    );
  };

  it("lets only the ingest and erase functions write messages (the tick only its inferred links), and only ingest, the tick and the erasure (a linker reset) the channels", () => {
    const writers = (table: string) =>
      tableWrites()
        .filter((w) => JSON.stringify(w.resource).includes(`"${table}"`))
        .map((w) => `${w.type} ${w.roles.join(",")}`);
    // Ingestion's puts, edits and deletions; the erasure's deletions and held deletions; the tick's
    // inferred links (one attribute, checked below).
    expect(writers(ids.messages).sort()).toEqual(
      [
        `AWS::IAM::Policy ${ids.ingestRole}`,
        `AWS::IAM::Policy ${ids.ingestRole}`,
        `AWS::IAM::Policy ${ids.eraseRole}`,
        `AWS::IAM::Policy ${ids.eraseRole}`,
        `AWS::IAM::Policy ${ids.tickRole}`,
      ].sort(),
    );
    // Ingestion's marks, the tick's state and marks, the erasure's linker reset, the counter's
    // count (checked below).
    expect(writers(ids.channels).sort()).toEqual(
      [
        `AWS::IAM::Policy ${ids.ingestRole}`,
        `AWS::IAM::Policy ${ids.countRole}`,
        `AWS::IAM::Policy ${ids.tickRole}`,
        `AWS::IAM::Policy ${ids.eraseRole}`,
      ].sort(),
    );
    // Nothing exported for other stacks writes any table: producers only send to the queue.
    expect(tableWrites().filter((w) => w.type === "AWS::IAM::ManagedPolicy")).toEqual([]);
    expect(JSON.stringify(statementsOf(template, "AWS::IAM::ManagedPolicy"))).not.toContain(
      "dynamodb:",
    );
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
      // The reply linker's inferred parents: one attribute of a stored message, nothing returned.
      {
        Effect: "Allow",
        Action: "dynamodb:UpdateItem",
        Resource: arn(ids.messages),
        Condition: {
          "ForAllValues:StringLike": {
            "dynamodb:Attributes": ["conversation", "key", "inferredReplyTo"],
          },
          StringEqualsIfExists: { "dynamodb:ReturnValues": ["NONE"] },
        },
      },
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
    for (const role of [ids.ingestRole, ids.tickRole, ids.extractRole, ids.eraseRole]) {
      expect(JSON.stringify(roleStatements(template, role))).not.toContain(ids.conversations);
    }
    expect(JSON.stringify(statementsOf(template, "AWS::IAM::ManagedPolicy"))).not.toContain(
      ids.conversations,
    );
  });

  it("gives the erase role the byAuthor and conversations indexes, reads by key and of a channel, deletions, the results table and the channels' linker reset, nothing more", () => {
    expect(roleStatements(template, ids.eraseRole)).toEqual([
      logsStatement(ids.eraseLogs),
      // The person's messages, and the channels whose corrections name them.
      {
        Effect: "Allow",
        Action: "dynamodb:Query",
        Resource: [indexArn(ids.messages, "byAuthor"), indexArn(ids.messages, "conversations")],
      },
      // Reads by key, and the messages of a channel named after the person.
      {
        Effect: "Allow",
        Action: ["dynamodb:BatchGetItem", "dynamodb:Query"],
        Resource: arn(ids.messages),
      },
      changeStatement(ids.messages),
      // Only a held deletion's attributes (and `position`, which its condition names): it
      // cannot put a message.
      {
        Effect: "Allow",
        Action: "dynamodb:PutItem",
        Resource: arn(ids.messages),
        Condition: {
          "ForAllValues:StringLike": {
            "dynamodb:Attributes": [
              "conversation",
              "key",
              "v",
              "id",
              "deleted",
              "expiresAt",
              "position",
            ],
          },
        },
      },
      {
        Effect: "Allow",
        Action: [
          "dynamodb:GetItem",
          "dynamodb:Query",
          "dynamodb:PutItem",
          "dynamodb:UpdateItem",
          "dynamodb:DeleteItem",
          "dynamodb:BatchWriteItem",
        ],
        Resource: arn(ids.results),
      },
      // The reply linker's reset on a channel's marks, and marking it due: never the tick's
      // state, read position or outbox, nothing returned.
      {
        Effect: "Allow",
        Action: "dynamodb:UpdateItem",
        Resource: arn(ids.channels),
        Condition: {
          "ForAllValues:StringLike": {
            "dynamodb:Attributes": ["channel", "item", "linkerReset", "dueShard", "dueAt"],
          },
          StringEqualsIfExists: { "dynamodb:ReturnValues": ["NONE"] },
        },
      },
      // The audit key its items' person keys are hashed with, and no other secret.
      {
        Effect: "Allow",
        Action: ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"],
        Resource: ref(logicalId(stack, stack.erasure.auditKey)),
      },
    ]);
    expect(properties(ids.eraseFunction)).toMatchObject({
      Timeout: 900,
      ReservedConcurrentExecutions: 1,
      Environment: {
        Variables: expect.objectContaining({
          MESSAGES_TABLE: ref(ids.messages),
          RESULTS_TABLE: ref(ids.results),
          CHANNELS_TABLE: ref(ids.channels),
        }),
      },
    });
  });

  it("gives the extraction role its messages reads, the results table, the model and the queue", () => {
    expect(roleStatements(template, ids.extractRole)).toEqual([
      logsStatement(ids.extractLogs),
      // DynamoDbStore.getMessages: BatchGetItem by key, nothing else of the messages table.
      { Effect: "Allow", Action: "dynamodb:BatchGetItem", Resource: arn(ids.messages) },
      {
        Effect: "Allow",
        Action: [
          "dynamodb:GetItem",
          "dynamodb:Query",
          "dynamodb:PutItem",
          "dynamodb:UpdateItem",
          "dynamodb:DeleteItem",
          "dynamodb:BatchWriteItem",
        ],
        Resource: arn(ids.results),
      },
      // A segment whose attempts are used up is moved to the DLQ by the function itself.
      { Effect: "Allow", Action: "sqs:SendMessage", Resource: arn(ids.segmentDlq) },
      // A change during an extraction, past the share, sends the segment back.
      { Effect: "Allow", Action: "sqs:SendMessage", Resource: arn(ids.segmentQueue) },
      // Converse is authorized as InvokeModel: on the configured model, in this region, only.
      {
        Effect: "Allow",
        Action: "bedrock:InvokeModel",
        Resource: modelArn("amazon.nova-lite-v1:0"),
      },
      {
        Effect: "Allow",
        Action: [
          "sqs:ReceiveMessage",
          "sqs:ChangeMessageVisibility",
          "sqs:GetQueueUrl",
          "sqs:DeleteMessage",
          "sqs:GetQueueAttributes",
        ],
        Resource: arn(ids.segmentQueue),
      },
    ]);
  });

  it("lets only extraction and ingestion's redaction reach the results table, only extraction Bedrock or any secret", () => {
    for (const role of [ids.ingestRole, ids.tickRole]) {
      const statements = JSON.stringify(roleStatements(template, role));
      if (role === ids.tickRole) expect(statements).not.toContain(ids.results);
      expect(statements).not.toContain("bedrock:");
    }
    // The one secret a role reads: the erasure's audit key, by the erase role.
    const secretReaders = statementsOf(template, "AWS::IAM::Policy").filter((s) =>
      JSON.stringify(s).includes("secretsmanager:"),
    );
    expect(secretReaders).toEqual([
      expect.objectContaining({ Resource: ref(logicalId(stack, stack.erasure.auditKey)) }),
    ]);
    const all = JSON.stringify(statementsOf(template, "AWS::IAM::Policy"));
    expect(all).not.toContain("ssm:");
    expect(JSON.stringify(statementsOf(template, "AWS::IAM::ManagedPolicy"))).not.toContain(
      ids.results,
    );
  });

  it.each([
    ["segmentQueue", "the tick's role, and ingestion's and extraction's for re-extractions"],
    ["segmentDlq", "the tick's role and the extraction role, which dead-letters itself"],
  ] as const)("lets only %s's senders send: %s", (queue, _who) => {
    const senders =
      queue === "segmentQueue"
        ? [arn(ids.tickRole), arn(ids.ingestRole), arn(ids.extractRole)]
        : [arn(ids.tickRole), arn(ids.extractRole)];
    template.hasResourceProperties("AWS::SQS::QueuePolicy", {
      Queues: [ref(ids[queue])],
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Effect: "Deny",
            Principal: { AWS: "*" },
            Action: "sqs:SendMessage",
            Resource: arn(ids[queue]),
            Condition: { ArnNotEquals: { "aws:PrincipalArn": senders } },
          },
        ]),
      },
    });
  });

  it("denies senders to the segment DLQ as to its queue, the operators named included", () => {
    const redriver = "arn:aws:iam::123456789012:role/redriver";
    const { template: named } = synthesize(
      { "aws:cdk:bundling-stacks": [] },
      { segmentQueueSenders: [redriver] },
    );
    const denies = statementsOf(named, "AWS::SQS::QueuePolicy").filter(
      (st) => st.Effect === "Deny" && st.Action === "sqs:SendMessage",
    );
    expect(denies.map((deny) => deny.Condition)).toEqual(
      expect.arrayContaining([
        {
          ArnNotEquals: {
            "aws:PrincipalArn": [
              arn(ids.tickRole),
              redriver,
              arn(ids.ingestRole),
              arn(ids.extractRole),
            ],
          },
        },
        {
          ArnNotEquals: { "aws:PrincipalArn": [arn(ids.tickRole), redriver, arn(ids.extractRole)] },
        },
      ]),
    );
    expect(denies).toHaveLength(2);
  });

  it("lets CloudWatch use the alarm key and publish to the topic for this stack's alarms only", () => {
    const keys = Object.values(template.findResources("AWS::KMS::Key"));
    expect(keys).toHaveLength(1);
    const cloudwatch = (statements: Statement[]) =>
      statements.filter(
        (s) => (s.Principal as { Service?: string })?.Service === "cloudwatch.amazonaws.com",
      );
    const key = cloudwatch(keys[0].Properties.KeyPolicy.Statement as Statement[]);
    const topic = cloudwatch(statementsOf(template, "AWS::SNS::TopicPolicy"));
    const expected = ownAlarms();
    expect(expected.ArnEquals["aws:SourceArn"].length).toBeGreaterThan(10);
    for (const statements of [key, topic]) {
      expect(statements).toHaveLength(1);
      expect(statements[0].Condition).toEqual(expected);
    }
    // No pattern: an alarm of another stack whose name starts the same cannot publish.
    expect(JSON.stringify(topic)).not.toContain("alarm:*");
  });

  it("exports a managed policy for producers that only sends to the ingest queue", () => {
    expect(statementsOf(template, "AWS::IAM::ManagedPolicy")).toEqual([
      { Effect: "Allow", Action: "sqs:SendMessage", Resource: arn(ids.ingestQueue) },
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

describe("model access, by extractor", () => {
  // Bundling skipped: these stacks are read for their policies and environment only.
  const variant = (context: Record<string, unknown>) => {
    const synthesized_ = synthesize({ "aws:cdk:bundling-stacks": [], ...context });
    const { extraction } = synthesized_.stack;
    const role = logicalId(synthesized_.stack, extraction.function.role);
    const fn = logicalId(synthesized_.stack, extraction.function.function);
    const resources = synthesized_.template.toJSON().Resources;
    return {
      ...synthesized_,
      statements: roleStatements(synthesized_.template, role),
      variables: resources[fn].Properties.Environment.Variables as Record<string, unknown>,
    };
  };
  const openai = {
    extractor: "openai",
    modelId: "gpt-4o-mini",
    openaiBaseUrl: "https://llm.example.com/v1",
  };
  const SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:convoseg/openai-AbCdEf";
  const nonLogging = (statements: Statement[]) =>
    statements.filter((s) => !actionsOf(s).some((a) => /^(logs|sqs|dynamodb):/.test(a)));
  const profileArn = partitionArn(
    ":bedrock:",
    { Ref: "AWS::Region" },
    ":",
    { Ref: "AWS::AccountId" },
    ":inference-profile/us.amazon.nova-lite-v1:0",
  );

  it("a cross-region inference profile: the profile, and its model in any region through it only", () => {
    const {
      statements,
      report,
      stack: profileStack,
    } = variant({
      modelId: "us.amazon.nova-lite-v1:0",
    });
    expect(nonLogging(statements)).toEqual([
      { Effect: "Allow", Action: "bedrock:InvokeModel", Resource: profileArn },
      {
        Effect: "Allow",
        Action: "bedrock:InvokeModel",
        Resource: partitionArn(":bedrock:*::foundation-model/amazon.nova-lite-v1:0"),
        Condition: { StringEquals: { "bedrock:InferenceProfileArn": profileArn } },
      },
    ]);
    // The region wildcard is acknowledged for exactly that resource, with its reason.
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
    const acknowledged = profileStack.extraction.function.role.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.keys(entry.data as Record<string, string>));
    expect(acknowledged).toEqual([
      "Annotation::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/amazon.nova-lite-v1:0]",
    ]);
  });

  it("openai with a secret: GetSecretValue on that secret only, no Bedrock, the ARN not the key", () => {
    const {
      statements,
      variables,
      report,
      template: t,
    } = variant({
      ...openai,
      openaiApiKeySecret: SECRET,
    });
    expect(nonLogging(statements)).toEqual([
      { Effect: "Allow", Action: "secretsmanager:GetSecretValue", Resource: SECRET },
    ]);
    expect(variables).toMatchObject({
      EXTRACTOR: "openai",
      MODEL_ID: "gpt-4o-mini",
      OPENAI_BASE_URL: "https://llm.example.com/v1",
      OPENAI_API_KEY_SECRET: SECRET,
    });
    expect(Object.keys(variables).filter((name) => name.includes("KEY"))).toEqual([
      "OPENAI_API_KEY_SECRET",
    ]);
    expect(JSON.stringify(t.toJSON())).not.toContain("bedrock:");
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
  });

  it("openai with a parameter: GetParameter on that parameter only, the name not the key", () => {
    const {
      statements,
      variables,
      report,
      template: t,
    } = variant({
      ...openai,
      openaiApiKeyParameter: "/convoseg/openai-api-key",
    });
    expect(nonLogging(statements)).toEqual([
      {
        Effect: "Allow",
        Action: "ssm:GetParameter",
        Resource: {
          "Fn::Join": [
            "",
            [
              "arn:",
              { Ref: "AWS::Partition" },
              ":ssm:",
              { Ref: "AWS::Region" },
              ":",
              { Ref: "AWS::AccountId" },
              ":parameter/convoseg/openai-api-key",
            ],
          ],
        },
      },
    ]);
    expect(Object.keys(variables).filter((name) => name.includes("KEY"))).toEqual([
      "OPENAI_API_KEY_PARAMETER",
    ]);
    expect(variables.OPENAI_API_KEY_PARAMETER).toBe("/convoseg/openai-api-key");
    const whole = JSON.stringify(t.toJSON());
    expect(whole).not.toContain("bedrock:");
    // The key is in SSM: no secret is read but the erasure's audit key.
    expect(whole.match(/secretsmanager:GetSecretValue/g)).toHaveLength(1);
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
  });
});

describe("queues", () => {
  it("encrypts every queue and refuses requests without TLS", () => {
    const queues = template.findResources("AWS::SQS::Queue");
    expect(Object.keys(queues)).toHaveLength(6);
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

  it("sends segments to a high-throughput FIFO queue sized to the body limit, with a FIFO DLQ", () => {
    const queue = properties(ids.segmentQueue);
    expect(queue).toMatchObject({
      FifoQueue: true,
      DeduplicationScope: "messageGroup",
      FifoThroughputLimit: "perMessageGroupId",
      MaximumMessageSize: DEFAULT_MAX_BODY_BYTES,
      // The consumer counts its own attempts and dead-letters by itself: SQS's is a last resort.
      RedrivePolicy: { deadLetterTargetArn: arn(ids.segmentDlq), maxReceiveCount: 1000 },
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
      // A flood of producers waits in the queue: ingestConcurrency functions at most.
      ScalingConfig: { MaximumConcurrency: 4 },
    });
  });

  it("counts messages from the messages table's stream, retried and halved, failures described in their queue", () => {
    expect(properties(ids.messages).StreamSpecification).toEqual({
      StreamViewType: "NEW_AND_OLD_IMAGES",
    });
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      EventSourceArn: { "Fn::GetAtt": [ids.messages, "StreamArn"] },
      FunctionName: ref(ids.countFunction),
      StartingPosition: "TRIM_HORIZON",
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 10,
      DestinationConfig: { OnFailure: { Destination: arn(ids.countFailures) } },
    });
    expect(properties(ids.countFunction)).toMatchObject({
      Environment: { Variables: { CHANNELS_TABLE: ref(ids.channels) } },
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
        "CountDeadLetters",
        "CountErrors",
        "CountThrottles",
        "DynamoDbThrottles",
        "ExtractErrors",
        "ExtractThrottles",
        "ExtractionFailureRate",
        "HoldsRenewed",
        "IngestDeadLetters",
        "IngestErrors",
        "IngestQueueOldestMessage",
        "IngestThrottles",
        "InvalidModelOutputRate",
        "ModelAuthFailures",
        "OldestDueChannel",
        "ScheduleDeadLetters",
        "SegmentDeadLetters",
        "SegmentQueueOldestMessage",
        "SequenceRewound",
        "TickErrors",
        "TickThrottles",
        "TicksMissing",
        "TicksStoppedEarly",
        "TokenBudgetReached",
        "TokenSpendDaily",
        "TokenSpendHourly",
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
    ["ExtractErrors", "Errors", "extractFunction"],
    ["ExtractThrottles", "Throttles", "extractFunction"],
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

  it.each(["SequenceRewound", "HoldsRenewed"])(
    "%s fires on any channel whose marks a writer outside ingestion changed",
    (name) => {
      expect(alarm(name)).toMatchObject({ ...tickMetric(name), ...above(0) });
    },
  );

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

  const extractMetric = (metric: string, period: number) => ({
    Metric: {
      Namespace: "convoseg",
      MetricName: metric,
      Dimensions: [{ Name: "service", Value: "extractor" }],
    },
    Period: period,
    Stat: "Sum",
  });

  it("SegmentDeadLetters is the extraction function's: segments it gave up on", () => {
    expect(alarm("SegmentDeadLetters").AlarmDescription).toMatch(/extraction function/);
  });

  it("InvalidModelOutputRate fires when over 10% of LLM calls end in invalid output", () => {
    const properties_ = alarm("InvalidModelOutputRate");
    expect(properties_).toMatchObject({
      Threshold: 0.1,
      ComparisonOperator: "GreaterThanThreshold",
      EvaluationPeriods: 1,
      TreatMissingData: "notBreaching",
      ...notifies(),
    });
    expect(properties_.MetricName).toBeUndefined();
    expect(properties_.Metrics).toEqual([
      {
        Id: "expr_1",
        Expression: "IF(FILL(calls, 0) > 0, invalid / FILL(calls, 0), invalid)",
        Label: "Invalid model outputs per LLM call",
        ReturnData: true,
      },
      { Id: "invalid", MetricStat: extractMetric("InvalidModelOutputs", 900), ReturnData: false },
      { Id: "calls", MetricStat: extractMetric("LLMCalls", 900), ReturnData: false },
    ]);
  });

  it("TokenBudgetReached fires on any budget pause", () => {
    expect(alarm("TokenBudgetReached")).toMatchObject({
      Namespace: "convoseg",
      MetricName: "BudgetPauses",
      Dimensions: [{ Name: "service", Value: "extractor" }],
      Period: 300,
      ...above(0),
    });
  });

  it("ModelAuthFailures fires on any 401/403 from the provider", () => {
    expect(alarm("ModelAuthFailures")).toMatchObject({ MetricName: "AuthFailures", ...above(0) });
  });

  it.each([
    ["TokenSpendHourly", 3600, 10_000_000 / 8],
    ["TokenSpendDaily", 86_400, 10_000_000 * 0.8],
  ] as const)(
    "%s compares input and output tokens with the daily budget",
    (name, period, threshold) => {
      const properties_ = alarm(name);
      expect(properties_).toMatchObject(above(threshold));
      expect(properties_.Metrics).toEqual([
        {
          Id: "expr_1",
          Expression: "FILL(input, 0) + FILL(output, 0)",
          Label: "Input and output tokens",
          ReturnData: true,
        },
        { Id: "input", MetricStat: extractMetric("InputTokens", period), ReturnData: false },
        { Id: "output", MetricStat: extractMetric("OutputTokens", period), ReturnData: false },
      ]);
    },
  );

  it("ExtractionFailureRate fires when over half the attempts in 15 minutes failed", () => {
    const properties_ = alarm("ExtractionFailureRate");
    expect(properties_).toMatchObject(above(0.5));
    expect(properties_.Metrics).toContainEqual({
      Id: "failed",
      MetricStat: extractMetric("ExtractionFailures", 900),
      ReturnData: false,
    });
  });

  it.each([
    ["SegmentQueueOldestMessage", "segmentQueue", 3600],
    ["IngestQueueOldestMessage", "ingestQueue", 900],
  ] as const)("%s fires on the queue's oldest message", (name, queue, threshold) => {
    expect(alarm(name)).toMatchObject({
      Namespace: "AWS/SQS",
      MetricName: "ApproximateAgeOfOldestMessage",
      Dimensions: [{ Name: "QueueName", Value: { "Fn::GetAtt": [ids[queue], "QueueName"] } }],
      Statistic: "Maximum",
      ...above(threshold),
    });
  });

  it("DynamoDbThrottles sums every table's read and write throttles", () => {
    const properties_ = alarm("DynamoDbThrottles");
    expect(properties_).toMatchObject(above(0, 3));
    const metrics = (properties_.Metrics as { MetricStat?: { Metric: { MetricName: string } } }[])
      .flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : []))
      .sort();
    expect(metrics).toEqual([
      ...Array(4).fill("ReadThrottleEvents"),
      ...Array(4).fill("WriteThrottleEvents"),
    ]);
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
      Condition: ownAlarms(),
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

describe("dashboard", () => {
  /** The dashboard's widgets: its body, each reference (always inside a JSON string) as `<ref>`. */
  const widgets = () => {
    const body = properties(ids.dashboard).DashboardBody as { "Fn::Join": [string, unknown[]] };
    const text = body["Fn::Join"][1]
      .map((part) => (typeof part === "string" ? part : "<ref>"))
      .join("");
    return (JSON.parse(text) as { widgets: { properties: Record<string, unknown> }[] }).widgets.map(
      (w) => w.properties,
    );
  };
  const widget = (title: string) => {
    const found = widgets().filter((w) => w.title === title);
    expect(found).toHaveLength(1);
    return found[0] as { metrics: unknown[][]; period?: number };
  };
  const extractor = ["service", "extractor"];

  it("draws tokens and LLM calls per hour", () => {
    const { metrics } = widget("LLM tokens and calls per hour");
    for (const name of ["InputTokens", "OutputTokens", "CacheReadTokens", "CacheWriteTokens"]) {
      expect(metrics).toContainEqual([
        "convoseg",
        name,
        ...extractor,
        { period: 3600, stat: "Sum" },
      ]);
    }
    expect(metrics).toContainEqual([
      "convoseg",
      "LLMCalls",
      ...extractor,
      { period: 3600, stat: "Sum", yAxis: "right" },
    ]);
  });

  it("estimates the cost per hour from the token prices (Nova Lite's by default)", () => {
    const { metrics } = widget("Estimated LLM cost per hour (USD)");
    expect(metrics).toEqual([
      [
        {
          expression: "(input * 0.06 + output * 0.24) / 1000000",
          label: "USD at 0.06 in / 0.24 out per million tokens",
          period: 3600,
        },
      ],
      [
        "convoseg",
        "InputTokens",
        ...extractor,
        { period: 3600, stat: "Sum", visible: false, id: "input" },
      ],
      [
        "convoseg",
        "OutputTokens",
        ...extractor,
        { period: 3600, stat: "Sum", visible: false, id: "output" },
      ],
    ]);
  });

  it("draws the extraction function and its segments", () => {
    expect(JSON.stringify(widget("Extraction function"))).toContain("Throttles");
    const segments = JSON.stringify(widget("Extraction: segments"));
    for (const name of ["SegmentsExtracted", "ExtractionFailures", "WindowLatency"]) {
      expect(segments).toContain(name);
    }
  });
  it("draws edits, deletions and redaction, by ingestion's counts, the tick's and the extractor's", () => {
    const ingest = ["service", "ingest"];
    const changes = widget("Edits and deletions").metrics.map((m) => m.slice(0, 4));
    for (const name of ["EditsApplied", "EditsStale", "EditsMissing", "DeletionsApplied"]) {
      expect(changes).toContainEqual(["convoseg", name, ...ingest]);
    }
    expect(changes).toContainEqual(["convoseg", "DeletedMessagesRefused", ...ingest]);
    expect(JSON.stringify(widget("Edits and deletions"))).toContain("DeletedBeforeDelivery");
    const redaction = widget("Redaction after delivery").metrics.map((m) => m.slice(0, 4));
    for (const name of [
      "ResultsRedacted",
      "QuestionsRedacted",
      "TopicEntriesRemoved",
      "WindowRepliesDeleted",
    ]) {
      expect(redaction).toContainEqual(["convoseg", name, ...ingest]);
    }
    expect(redaction).toContainEqual(["convoseg", "ChangesAfterExtraction", ...extractor]);
    const trimmed = widget("Stored results: what the bounds cut").metrics.map((m) => m[1]);
    expect(trimmed).toContain("TrimmedCandidates");
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
      ResultsTableName: { Value: ref(ids.results), Export: { Name: "Test-ResultsTableName" } },
      ExtractFunctionName: { Value: ref(ids.extractFunction) },
      IngestQueueUrl: { Value: ref(ids.ingestQueue), Export: { Name: "Test-IngestQueueUrl" } },
      IngestFunctionName: { Value: ref(ids.ingestFunction) },
      EraseUserFunctionName: { Value: ref(ids.eraseFunction) },
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
      "Test/Erasure/AuditKey Annotation::AwsSolutions-SMG4",
      "Test/Erasure/EraseUser/Function Annotation::AwsSolutions-L1",
      "Test/Erasure/LoopRole Annotation::AwsSolutions-IAM5[Resource::*]",
      "Test/Extraction/Extract/Function Annotation::AwsSolutions-L1",
      "Test/Ingestion/Count/Function Annotation::AwsSolutions-L1",
      "Test/Ingestion/Count/Role Annotation::AwsSolutions-IAM5[Resource::*]",
      "Test/Ingestion/CountFailures Annotation::AwsSolutions-SQS3",
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

describe("fan-out", () => {
  let fanned: Synthesized;
  let fan: Record<"dispatcher" | "dispatcherRole" | "worker" | "workerRole" | "workerLogs", string>;
  beforeAll(() => {
    fanned = synthesize({ dueShards: "16", workers: "8" });
    const { segmentation } = fanned.stack;
    const worker = segmentation.worker as NonNullable<typeof segmentation.worker>;
    fan = {
      dispatcher: logicalId(fanned.stack, segmentation.function.function),
      dispatcherRole: logicalId(fanned.stack, segmentation.function.role),
      worker: logicalId(fanned.stack, worker.function),
      workerRole: logicalId(fanned.stack, worker.role),
      workerLogs: logicalId(fanned.stack, worker.logGroup),
    };
  }, 120_000);
  const fannedProperties = (id: string) =>
    (fanned.template.toJSON().Resources[id] as { Properties: Record<string, unknown> }).Properties;
  const variables = (id: string) =>
    (fannedProperties(id).Environment as { Variables: Record<string, unknown> }).Variables;

  it("is off by default: one function does the whole tick", () => {
    expect(stack.segmentation.worker).toBeUndefined();
    template.resourceCountIs("AWS::Lambda::Function", 5);
  });

  it("runs as many workers as configured at once, each like the single tick", () => {
    expect(fannedProperties(fan.worker)).toMatchObject({
      Timeout: 270,
      ReservedConcurrentExecutions: 8,
      MemorySize: 512,
    });
    fanned.template.hasResourceProperties("AWS::Lambda::EventInvokeConfig", {
      FunctionName: ref(fan.worker),
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 300,
    });
    const { WORKER_FUNCTION, ...dispatcher } = variables(fan.dispatcher);
    expect(WORKER_FUNCTION).toEqual(ref(fan.worker));
    expect(dispatcher).toEqual(variables(fan.worker));
    expect(variables(fan.worker)).toMatchObject({ DUE_SHARDS: "16", WORKERS: "8" });
    expect(fannedProperties(fan.dispatcher)).toMatchObject({ ReservedConcurrentExecutions: 1 });
  });

  it("lets the dispatcher only start the worker, and only the worker touch tables and queue", () => {
    const dispatcher = roleStatements(fanned.template, fan.dispatcherRole);
    expect(dispatcher.flatMap(actionsOf).filter((a) => !a.startsWith("logs:"))).toEqual([
      "lambda:InvokeFunction",
    ]);
    const workerActions = roleStatements(fanned.template, fan.workerRole).flatMap(actionsOf);
    expect(workerActions).toEqual(
      expect.arrayContaining(["dynamodb:UpdateItem", "sqs:SendMessage"]),
    );
    expect(roleStatements(fanned.template, fan.workerRole)[0]).toEqual(
      logsStatement(fan.workerLogs),
    );
    fanned.template.hasResourceProperties("AWS::SQS::QueuePolicy", {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: "Deny",
            Condition: {
              ArnNotEquals: {
                "aws:PrincipalArn": [
                  arn(fan.workerRole),
                  arn(logicalId(fanned.stack, fanned.stack.ingestion.function.role)),
                  arn(logicalId(fanned.stack, fanned.stack.extraction.function.role)),
                ],
              },
            },
          }),
        ]),
      },
    });
  });

  it("alarms on the workers' errors and throttles, and passes the AwsSolutions checks", () => {
    const names = Object.values(fanned.template.findResources("AWS::CloudWatch::Alarm")).map((a) =>
      (a.Properties.AlarmName as string).replace("Test-", ""),
    );
    expect(names).toEqual(
      expect.arrayContaining(["SegmentWorkerErrors", "SegmentWorkerThrottles"]),
    );
    expect(fanned.report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
  });
});
