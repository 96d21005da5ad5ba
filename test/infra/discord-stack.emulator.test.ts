/** The Discord poller in the stack: absent by default; with its settings, least privilege and nag-clean. */
import { describe, expect, it } from "vitest";
import { actionsOf, logicalId, roleStatements, synthesize } from "./synth.js";

const SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:discord-token-AbCdEf";
// Bundling skipped: these stacks are read for their resources and policies only.
const NO_BUNDLING = { "aws:cdk:bundling-stacks": [] };

describe("the Discord poller in the stack", () => {
  it("is not deployed without discordChannels", () => {
    const { stack, template } = synthesize(NO_BUNDLING);
    expect(stack.discord).toBeUndefined();
    const env = Object.values(template.findResources("AWS::Lambda::Function")).map(
      (fn) =>
        (fn as { Properties: { Environment?: { Variables?: object } } }).Properties.Environment
          ?.Variables ?? {},
    );
    expect(env.some((vars) => "DISCORD_CHANNELS" in vars)).toBe(false);
  });

  it("with channels: a scheduled function of least privilege, an auth alarm, cdk-nag clean", () => {
    const { stack, template, report } = synthesize({
      ...NO_BUNDLING,
      discordChannels: "111,222",
      discordTokenSecret: SECRET,
      discordSchedule: "10m",
      discordBackfillFrom: "2025-06-01T00:00:00Z",
    });
    const discord = stack.discord;
    expect(discord).toBeDefined();
    if (!discord) return;
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
    const fn = template.toJSON().Resources[logicalId(stack, discord.function.function)];
    expect(fn.Properties.ReservedConcurrentExecutions).toBe(1);
    expect(fn.Properties.Timeout).toBe(590);
    expect(fn.Properties.Environment.Variables).toMatchObject({
      DISCORD_CHANNELS: "111,222",
      DISCORD_TOKEN_SECRET: SECRET,
      REREAD_WINDOW: "200",
      BACKFILL_FROM: "2025-06-01T00:00:00Z",
    });
    const statements = roleStatements(template, logicalId(stack, discord.function.role));
    const actions = statements.flatMap(actionsOf).sort();
    expect(actions).toEqual(
      [
        "dynamodb:BatchGetItem",
        "dynamodb:BatchGetItem",
        "dynamodb:UpdateItem",
        "logs:CreateLogStream",
        "logs:PutLogEvents",
        "secretsmanager:GetSecretValue",
        "sqs:SendMessage",
      ].sort(),
    );
    const secret = statements.find((s) => actionsOf(s).includes("secretsmanager:GetSecretValue"));
    expect(secret?.Resource).toBe(SECRET);
    // It sends to a queue of its own, whose lines ingestion holds to Discord's grant.
    const send = statements.find((s) => actionsOf(s).includes("sqs:SendMessage"));
    expect(send?.Resource).toEqual({
      "Fn::GetAtt": [logicalId(stack, discord.queue.queue), "Arn"],
    });
    expect(fn.Properties.Environment.Variables.INGEST_QUEUE_URL).toEqual({
      Ref: logicalId(stack, discord.queue.queue),
    });
    // No table write but the cursors' UpdateItem: messages go through the ingest queue.
    const update = statements.find((s) => actionsOf(s).includes("dynamodb:UpdateItem"));
    expect(update?.Resource).toEqual({
      "Fn::GetAtt": [logicalId(stack, discord.cursors), "Arn"],
    });
    template.hasResourceProperties("AWS::Events::Rule", {
      ScheduleExpression: "rate(10 minutes)",
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "DiscordAuthFailures",
      Threshold: 0,
    });
    // A run that fails or times out raises an alarm of its own.
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "Errors",
      Namespace: "AWS/Lambda",
      Dimensions: [
        { Name: "FunctionName", Value: { Ref: logicalId(stack, discord.function.function) } },
      ],
      Threshold: 0,
    });
  });

  it("names its alarm among those the alarm topic lets CloudWatch publish for", () => {
    const { template } = synthesize({
      ...NO_BUNDLING,
      discordChannels: "111",
      discordTokenSecret: SECRET,
    });
    const names = Object.values(template.findResources("AWS::CloudWatch::Alarm")).map(
      (alarm) => (alarm as { Properties: { AlarmName?: unknown } }).Properties.AlarmName,
    );
    expect(names.some((name) => String(name).endsWith("-DiscordAuthFailures"))).toBe(true);
    expect(names.some((name) => String(name).endsWith("-DiscordPollerErrors"))).toBe(true);
    const policy = JSON.stringify(template.findResources("AWS::SNS::TopicPolicy"));
    // An alarm the topic's policy does not name would fire, and its notification be refused.
    for (const name of names) expect(policy).toContain(`:alarm:${String(name)}`);
  });
});
