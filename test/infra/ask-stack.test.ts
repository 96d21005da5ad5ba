/** The ask endpoints in the stack: each off until set, on search only, each with least privilege. */
import { CORRECTION_ATTRIBUTES } from "convoseg/knowledge/store/schema";
import { describe, expect, it } from "vitest";
import { actionsOf, logicalId, modelArn, roleStatements, synthesize } from "./synth.js";

const NO_BUNDLING = { "aws:cdk:bundling-stacks": [] };
const ARN = (name: string) => `arn:aws:secretsmanager:us-east-1:123456789012:secret:${name}-AbCdEf`;
const KEY = "a".repeat(64);
const ALL = {
  ...NO_BUNDLING,
  search: "true",
  digest: "false",
  askSlackSigningSecret: ARN("slack-ask"),
  askSlackBotToken: ARN("slack-bot"),
  askDiscordPublicKey: KEY,
  askTelegramSecretToken: ARN("tg-ask"),
  askTelegramBotToken: ARN("tg-bot"),
  telegramSecretToken: ARN("tg-ingest"),
  telegramChats: "-1001,-1002",
};

describe("the ask endpoints in the stack", () => {
  it("are not deployed by default", () => {
    const { stack, template } = synthesize({ ...NO_BUNDLING, search: "true", digest: "false" });
    expect(stack.ask).toEqual({});
    expect(JSON.stringify(template.toJSON())).not.toMatch(/ANSWER_FUNCTION|SlackAsk|askCommand/);
    expect(Object.keys(template.findOutputs("*"))).not.toContain("SlackAskUrl");
  });

  it("refuses every setting at fault at once: no search, a bot token missing, a bad key", () => {
    expect(() =>
      synthesize({
        ...NO_BUNDLING,
        askSlackSigningSecret: ARN("slack-ask"),
        askDiscordPublicKey: "not-a-key",
      }),
    ).toThrow(
      /askSlackSigningSecret[\s\S]*set search=true[\s\S]*askDiscordPublicKey[\s\S]*64 hex digits/,
    );
    expect(() =>
      synthesize({
        ...NO_BUNDLING,
        search: "true",
        askTelegramSecretToken: ARN("tg-ask"),
        askTelegramBotUsername: "@bot",
      }),
    ).toThrow(/askTelegramBotToken[\s\S]*must be set[\s\S]*askTelegramBotUsername/);
  });

  it("give each platform a receiver and an answer function of least privilege, cdk-nag clean", () => {
    const { stack, template, report } = synthesize(ALL);
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
    expect(Object.keys(stack.ask).sort()).toEqual(["discord", "slack", "telegram"]);
    for (const [name, endpoint] of Object.entries(stack.ask)) {
      const receiver = roleStatements(template, logicalId(stack, endpoint.receiver.role));
      const answer = roleStatements(template, logicalId(stack, endpoint.answer.role));
      const actions = (statements: typeof receiver) =>
        [...new Set(statements.flatMap(actionsOf))].sort();
      expect(actions(receiver), name).toEqual(
        name === "discord"
          ? ["lambda:InvokeFunction", "logs:CreateLogStream", "logs:PutLogEvents"]
          : [
              "lambda:InvokeFunction",
              "logs:CreateLogStream",
              "logs:PutLogEvents",
              "secretsmanager:GetSecretValue",
            ],
      );
      expect(actions(answer), name).toEqual(
        [
          "logs:CreateLogStream",
          "logs:PutLogEvents",
          "s3:GetObject",
          "s3:ListBucket",
          ...(name === "discord" ? [] : ["secretsmanager:GetSecretValue"]),
        ].sort(),
      );
      const variables = (fn: typeof endpoint.receiver) =>
        (
          template.toJSON().Resources[logicalId(stack, fn.function)] as {
            Properties: {
              Environment: { Variables: Record<string, unknown> };
              ReservedConcurrentExecutions?: number;
            };
          }
        ).Properties;
      expect(variables(endpoint.answer).Environment.Variables).toHaveProperty("SEARCH_INDEX_URI");
      expect(variables(endpoint.receiver).Environment.Variables).not.toHaveProperty(
        "SEARCH_INDEX_URI",
      );
      expect(variables(endpoint.receiver).ReservedConcurrentExecutions).toBe(5);
      expect(variables(endpoint.answer).ReservedConcurrentExecutions).toBe(5);
    }
    const receiverEnv = (
      template.toJSON().Resources[
        logicalId(stack, stack.ask.telegram?.receiver.function ?? stack)
      ] as {
        Properties: { Environment: { Variables: Record<string, unknown> } };
      }
    ).Properties.Environment.Variables;
    // Telegram answers in the chats the ingest connector's allow-list names.
    expect(receiverEnv).toMatchObject({ ASK_CHANNELS: "-1001,-1002", ASK_COMMAND: "ask" });
    expect(Object.keys(template.findOutputs("*"))).toEqual(
      expect.arrayContaining(["SlackAskUrl", "DiscordInteractionsUrl", "TelegramAskWebhookUrl"]),
    );
  });

  it("with askModelId, let only the answer function invoke that model and count its tokens", () => {
    expect(() =>
      synthesize({ ...NO_BUNDLING, search: "true", askModelId: "amazon.nova-micro-v1:0" }),
    ).toThrow(/askModelId[\s\S]*is for the ask endpoints/);
    const { stack, template, report } = synthesize({
      ...ALL,
      askModelId: "amazon.nova-micro-v1:0",
      channelDailyTokenBudget: "200000",
    });
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
    const slack = stack.ask.slack;
    if (slack === undefined) throw new Error("no Slack ask endpoint");
    const answer = roleStatements(template, logicalId(stack, slack.answer.role));
    expect(answer.filter((s) => actionsOf(s).some((a) => a.startsWith("bedrock:")))).toEqual([
      expect.objectContaining({
        Action: "bedrock:InvokeModel",
        Resource: modelArn("amazon.nova-micro-v1:0"),
      }),
    ]);
    const dynamodb = answer.filter((s) => actionsOf(s).some((a) => a.startsWith("dynamodb:")));
    expect(dynamodb.flatMap(actionsOf).sort()).toEqual(["dynamodb:GetItem", "dynamodb:UpdateItem"]);
    expect(JSON.stringify(dynamodb)).toContain(logicalId(stack, stack.storage.results));
    const receiver = roleStatements(template, logicalId(stack, slack.receiver.role));
    expect(JSON.stringify(receiver)).not.toMatch(/bedrock|dynamodb/);
    const variables = (
      template.toJSON().Resources[logicalId(stack, slack.answer.function)] as {
        Properties: { Environment: { Variables: Record<string, unknown> } };
      }
    ).Properties.Environment.Variables;
    expect(variables).toMatchObject({
      ASK_MODEL_ID: "amazon.nova-micro-v1:0",
      DAILY_TOKEN_BUDGET: "10000000",
      CHANNEL_TOKEN_BUDGET: "200000",
    });
    expect(variables).toHaveProperty("RESULTS_TABLE");
  });

  it("with askMarkers, give Slack and Discord a mark function that may only put correction items", () => {
    const { stack, template, report } = synthesize({
      ...ALL,
      askMarkers: "U0MOD1,1200000000000000001",
    });
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
    expect(stack.ask.telegram?.mark).toBeUndefined();
    for (const name of ["slack", "discord"] as const) {
      const endpoint = stack.ask[name];
      const mark = endpoint?.mark;
      expect(mark, name).toBeDefined();
      if (endpoint === undefined || mark === undefined) continue;
      const statements = roleStatements(template, logicalId(stack, mark.role));
      expect([...new Set(statements.flatMap(actionsOf))].sort()).toEqual([
        "dynamodb:BatchGetItem",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:Query",
        "logs:CreateLogStream",
        "logs:PutLogEvents",
      ]);
      const put = statements.find((s) => actionsOf(s).includes("dynamodb:PutItem"));
      expect(put?.Condition).toEqual({
        "ForAllValues:StringEquals": { "dynamodb:Attributes": [...CORRECTION_ATTRIBUTES] },
      });
      const resources = template.toJSON().Resources as Record<
        string,
        { Properties: { Environment: { Variables: Record<string, unknown> } } }
      >;
      const env = (id: string) => resources[id].Properties.Environment.Variables;
      expect(env(logicalId(stack, mark.function))).toMatchObject({
        ASK_MARKERS: "U0MOD1,1200000000000000001",
      });
      expect(env(logicalId(stack, endpoint.receiver.function))).toHaveProperty("MARK_FUNCTION");
    }
    expect(() => synthesize({ ...NO_BUNDLING, search: "true", askMarkers: "anyone" })).toThrow(
      /askMarkers[\s\S]*Slack or Discord ask endpoint/,
    );
  });
});
