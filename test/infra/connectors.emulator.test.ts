/** The optional connectors in the stack: absent by default, least privilege and cdk-nag clean when on. */
import { Match } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "../../infra/config.js";
import { actionsOf, logicalId, roleStatements, type Synthesized, synthesize } from "./synth.js";

const SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:convoseg/slack-signing-AbCdEf";
const BOT = "arn:aws:secretsmanager:us-east-1:123456789012:secret:convoseg/slack-bot-AbCdEf";
const TOKEN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:convoseg/telegram-token-AbCdEf";
/** The ingest function's PRODUCERS, its queue ARNs written `<logical id>.Arn`. */
function producersOf(value: unknown): { queue: string }[] {
  const text = (part: unknown): string => {
    if (typeof part === "string") return part;
    const getAtt = (part as { "Fn::GetAtt"?: [string, string] })["Fn::GetAtt"];
    if (getAtt !== undefined) return getAtt.join(".");
    const join = (part as { "Fn::Join"?: [string, unknown[]] })["Fn::Join"];
    if (join !== undefined) return join[1].map(text).join(join[0]);
    throw new Error(`PRODUCERS holds an unexpected part: ${JSON.stringify(part)}`);
  };
  return JSON.parse(text(value));
}

/** The stack's Slack connector, which these tests deploy. */
function slackOf({ stack }: Synthesized) {
  if (stack.slack === undefined) throw new Error("the Slack connector is not deployed");
  return stack.slack;
}
let off: Synthesized;
let on: Synthesized;

beforeAll(() => {
  off = synthesize();
  // Both connectors in one synth: each is checked on its own below.
  on = synthesize(
    {},
    {
      slackSigningSecret: SECRET,
      slackBotTokenSecret: BOT,
      telegramSecretToken: TOKEN,
    },
  );
  // Two synths bundle every function twice: past the default hook timeout on a busy machine.
}, 180_000);

describe("the Slack connector", () => {
  it("is not deployed by default", () => {
    expect(off.stack.slack).toBeUndefined();
    expect(off.stack.telegram).toBeUndefined();
    off.template.resourceCountIs("AWS::Lambda::Url", 0);
    expect(Object.keys(off.template.findOutputs("SlackEventsUrl"))).toEqual([]);
    expect(Object.keys(off.template.findOutputs("TelegramWebhookUrl"))).toEqual([]);
    expect(JSON.stringify(off.template.toJSON())).not.toContain("SLACK_SIGNING_SECRET_ARN");
    expect(JSON.stringify(off.template.toJSON())).not.toContain("TELEGRAM_SECRET_TOKEN_ARN");
  });

  it("is deployed behind a Function URL without IAM auth, its URL an output", () => {
    const slack = slackOf(on);
    on.template.hasResourceProperties("AWS::Lambda::Url", {
      AuthType: "NONE",
      TargetFunctionArn: { "Fn::GetAtt": [logicalId(on.stack, slack.function.function), "Arn"] },
    });
    on.template.hasOutput("SlackEventsUrl", {
      Value: { "Fn::GetAtt": [Match.anyValue(), "FunctionUrl"] },
    });
    on.template.hasResourceProperties("AWS::Lambda::Function", {
      Environment: {
        Variables: Match.objectLike({
          SLACK_SIGNING_SECRET_ARN: SECRET,
          SLACK_BOT_TOKEN_ARN: BOT,
          INGEST_QUEUE_URL: { Ref: logicalId(on.stack, slack.queue.queue) },
          CLAIMS_TABLE: { Ref: logicalId(on.stack, slack.claims) },
        }),
      },
    });
  });

  it("may send to its own ingest queue, read its one secret and claim events, nothing else", () => {
    const slack = slackOf(on);
    const statements = roleStatements(on.template, logicalId(on.stack, slack.function.role));
    const granted = statements.map((s) => ({ actions: actionsOf(s).sort(), resource: s.Resource }));
    expect(granted).toEqual(
      expect.arrayContaining([
        {
          actions: ["sqs:SendMessage"],
          resource: { "Fn::GetAtt": [logicalId(on.stack, slack.queue.queue), "Arn"] },
        },
        { actions: ["secretsmanager:GetSecretValue"], resource: [SECRET, BOT] },
        {
          actions: ["dynamodb:DeleteItem", "dynamodb:PutItem"],
          resource: { "Fn::GetAtt": [logicalId(on.stack, slack.claims), "Arn"] },
        },
      ]),
    );
    // Its log group besides those three: no table of the pipeline, no other queue.
    expect(granted).toHaveLength(4);
    expect(granted.flatMap((g) => g.actions).filter((a) => a.startsWith("logs:"))).toEqual([
      "logs:CreateLogStream",
      "logs:PutLogEvents",
    ]);
  });

  it("has each connector's queue read by ingestion under the connector's grant, and no other producer's", () => {
    const telegram = on.stack.telegram;
    if (telegram === undefined) throw new Error("the Telegram connector is not deployed");
    const resources = on.template.toJSON().Resources;
    const ingest = resources[logicalId(on.stack, on.stack.ingestion.function.function)];
    expect(producersOf(ingest.Properties.Environment.Variables.PRODUCERS)).toEqual([
      {
        queue: `${logicalId(on.stack, on.stack.ingestion.queue.queue)}.Arn`,
        name: "queue",
        channels: { prefixes: [""] },
        changes: false,
      },
      {
        queue: `${logicalId(on.stack, slackOf(on).queue.queue)}.Arn`,
        name: "slack",
        channels: { platform: "slack" },
        changes: true,
      },
      {
        queue: `${logicalId(on.stack, telegram.queue.queue)}.Arn`,
        name: "telegram",
        channels: { platform: "telegram" },
        changes: true,
      },
    ]);
    for (const queue of [slackOf(on).queue.queue, telegram.queue.queue]) {
      on.template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
        EventSourceArn: { "Fn::GetAtt": [logicalId(on.stack, queue), "Arn"] },
        FunctionName: { Ref: logicalId(on.stack, on.stack.ingestion.function.function) },
        FunctionResponseTypes: ["ReportBatchItemFailures"],
      });
    }
    // The policy for producers outside the stack names the ingest queue only.
    const policy = on.template.findResources("AWS::IAM::ManagedPolicy");
    expect(JSON.stringify(policy)).not.toContain(logicalId(on.stack, slackOf(on).queue.queue));
    on.template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      AlarmName: "Test-SlackIngestDeadLetters",
      AlarmActions: [{ Ref: logicalId(on.stack, on.stack.observability.topic) }],
    });
  });

  it("holds a connector with an allow-list to those channels", () => {
    const { stack, template } = synthesize(
      { "aws:cdk:bundling-stacks": [] },
      { telegramSecretToken: TOKEN, telegramChats: "-1001,-1002" },
    );
    const ingest = template.toJSON().Resources[logicalId(stack, stack.ingestion.function.function)];
    expect(producersOf(ingest.Properties.Environment.Variables.PRODUCERS)[1]).toMatchObject({
      name: "telegram",
      channels: { ids: ["-1001", "-1002"] },
    });
  });

  it("reserves a small concurrency for each public receiver, so a flood cannot take the account's", () => {
    for (const connector of [slackOf(on), on.stack.telegram]) {
      const fn =
        on.template.toJSON().Resources[logicalId(on.stack, connector?.function.function as never)];
      expect(fn.Properties.ReservedConcurrentExecutions).toBe(5);
      // Private chats and DMs are left out unless connectorPrivateChats says otherwise.
      expect(fn.Properties.Environment.Variables.PRIVATE_CHATS).toBe("false");
      expect(fn.Properties.Environment.Variables.CHANNELS).toBeUndefined();
    }
  });

  it("alarms on refused requests and failed events, on the stack's topic", () => {
    on.template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      AlarmName: "Test-SlackReceiverErrors",
      MetricName: "Errors",
      Namespace: "AWS/Lambda",
    });
    for (const name of ["SlackRequestsRefused", "SlackEventsFailed"]) {
      on.template.hasResourceProperties("AWS::CloudWatch::Alarm", {
        AlarmName: `Test-${name}`,
        Namespace: "convoseg",
        Dimensions: [{ Name: "service", Value: "slack" }],
        AlarmActions: [{ Ref: logicalId(on.stack, on.stack.observability.topic) }],
      });
    }
    // CloudWatch may publish to the topic on behalf of the new alarms too.
    expect(JSON.stringify(on.template.findResources("AWS::SNS::TopicPolicy"))).toContain(
      "Test-SlackRequestsRefused",
    );
  });

  it("synthesizes cdk-nag clean, on and off", () => {
    expect(off.report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
    expect(on.report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
  });

  it("refuses a bot token without the connector, naming the setting", () => {
    expect(() => resolveConfig({ slackBotTokenSecret: BOT }, () => undefined)).toThrow(
      "convoseg: invalid setting slackBotTokenSecret (from stack props): is for the Slack connector: set slackSigningSecret too",
    );
  });

  it("refuses a setting that is not a secret ARN without echoing it", () => {
    const given = "8f742231b10e8888abcd99yyyzzz85a5";
    let error: unknown;
    try {
      resolveConfig({ slackSigningSecret: given }, () => undefined);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      "convoseg: invalid setting slackSigningSecret (from stack props): must be a Secrets Manager secret's full ARN, not the signing secret itself (the value is not shown)",
    );
  });
});

describe("the Telegram connector", () => {
  const telegramOf = ({ stack }: Synthesized) => {
    if (stack.telegram === undefined) throw new Error("the Telegram connector is not deployed");
    return stack.telegram;
  };

  it("is deployed behind its own Function URL, with its own role, secret and claims", () => {
    const telegram = telegramOf(on);
    on.template.resourceCountIs("AWS::Lambda::Url", 2);
    on.template.hasResourceProperties("AWS::Lambda::Url", {
      AuthType: "NONE",
      TargetFunctionArn: {
        "Fn::GetAtt": [logicalId(on.stack, telegram.function.function), "Arn"],
      },
    });
    on.template.hasOutput("TelegramWebhookUrl", {
      Value: { "Fn::GetAtt": [Match.anyValue(), "FunctionUrl"] },
    });
    const statements = roleStatements(on.template, logicalId(on.stack, telegram.function.role));
    const granted = statements.map((s) => ({ actions: actionsOf(s).sort(), resource: s.Resource }));
    expect(granted).toHaveLength(4);
    expect(granted).toContainEqual({ actions: ["secretsmanager:GetSecretValue"], resource: TOKEN });
    expect(granted).toContainEqual({
      actions: ["dynamodb:DeleteItem", "dynamodb:PutItem"],
      resource: { "Fn::GetAtt": [logicalId(on.stack, telegram.claims), "Arn"] },
    });
    expect(JSON.stringify(granted)).not.toContain(SECRET);
    on.template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      AlarmName: "Test-TelegramReceiverErrors",
      MetricName: "Errors",
      Dimensions: [
        { Name: "FunctionName", Value: { Ref: logicalId(on.stack, telegram.function.function) } },
      ],
    });
    for (const name of ["TelegramRequestsRefused", "TelegramEventsFailed"]) {
      on.template.hasResourceProperties("AWS::CloudWatch::Alarm", {
        AlarmName: `Test-${name}`,
        Dimensions: [{ Name: "service", Value: "telegram" }],
      });
    }
  });
});
