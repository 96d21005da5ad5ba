/** The read API in the stack: absent by default; IAM or JWT authorized, read-only, cdk-nag clean. */
import {
  API_METHODS,
  API_ROUTES,
  API_WRITE_METHODS,
  API_WRITE_ROUTES,
  apiHandler,
  memoryApiSources,
} from "convoseg/api";
import { CORRECTION_ATTRIBUTES } from "convoseg/knowledge/store/schema";
import { describe, expect, it } from "vitest";
import {
  ACTIVITY_READ_CONDITION,
  actionsOf,
  CHANNEL_FACTS_CONDITION,
  logicalId,
  roleStatements,
  synthesize,
} from "./synth.js";

// Bundling skipped: these stacks are read for their resources and policies only.
const NO_BUNDLING = { "aws:cdk:bundling-stacks": [] };

describe("the read API in the stack", () => {
  it("is not deployed without api", () => {
    const { stack, template } = synthesize(NO_BUNDLING);
    expect(stack.api).toBeUndefined();
    template.resourceCountIs("AWS::ApiGatewayV2::Api", 0);
  });

  it("with api: every route IAM-authorized, a read-only function, access logs, cdk-nag clean", () => {
    const { stack, template, report } = synthesize({ ...NO_BUNDLING, api: "true" });
    const api = stack.api;
    expect(api).toBeDefined();
    if (!api) return;
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
    expect(template.toJSON().Outputs).toHaveProperty("ApiUrl");
    const routes = Object.values(template.findResources("AWS::ApiGatewayV2::Route")).map(
      (r) => (r as { Properties: { RouteKey: string; AuthorizationType: string } }).Properties,
    );
    expect(routes.map((r) => r.RouteKey).sort()).toEqual(
      [
        "GET /channels",
        "GET /channels/{c}/questions",
        "GET /channels/{c}/faq",
        "GET /channels/{c}/digest",
        "GET /channels/{c}/stats",
        "GET /channels/{c}/segments/{id}",
        "GET /channels/{c}/topics",
        "GET /openapi.json",
        // Answered 501 by the deployed function until it keeps a search index (docs/search.md).
        "GET /search",
        "HEAD /channels",
        "HEAD /channels/{c}/questions",
        "HEAD /channels/{c}/faq",
        "HEAD /channels/{c}/digest",
        "HEAD /channels/{c}/stats",
        "HEAD /channels/{c}/segments/{id}",
        "HEAD /channels/{c}/topics",
        "HEAD /openapi.json",
        "HEAD /search",
        // The one write route, on a function of its own.
        "POST /channels/{c}/questions/{id}/correction",
      ].sort(),
    );
    expect(routes.every((r) => r.AuthorizationType === "AWS_IAM")).toBe(true);
    const statements = roleStatements(template, logicalId(stack, api.function.role));
    expect(statements.flatMap(actionsOf).sort()).toEqual(
      [
        "dynamodb:BatchGetItem",
        "dynamodb:GetItem",
        // A channel's item of the channels table: whether an empty page's channel exists.
        "dynamodb:GetItem",
        "dynamodb:Query",
        // The messages table's byPosition index: the channel list's names, platforms and times.
        "dynamodb:Query",
        "dynamodb:Scan",
        "logs:CreateLogStream",
        "logs:PutLogEvents",
      ].sort(),
    );
    const scan = statements.find((s) => actionsOf(s).includes("dynamodb:Scan"));
    expect(scan?.Resource).toEqual({
      "Fn::GetAtt": [logicalId(stack, stack.storage.channels), "Arn"],
    });
    const [query, facts] = statements.filter((s) => actionsOf(s).includes("dynamodb:Query"));
    expect(query?.Resource).toEqual({
      "Fn::GetAtt": [logicalId(stack, stack.storage.results), "Arn"],
    });
    // Of the messages table, only the byPosition index, and of each arrival no text (issue 40 §6).
    expect([facts && actionsOf(facts), facts?.Resource, facts?.Condition]).toEqual([
      ["dynamodb:Query"],
      {
        "Fn::Join": [
          "",
          [
            { "Fn::GetAtt": [logicalId(stack, stack.storage.messages), "Arn"] },
            "/index/byPosition",
          ],
        ],
      },
      CHANNEL_FACTS_CONDITION,
    ]);
    // The digest route's activity: the period's messages by id, and nothing else of that table.
    const batch = statements.find((s) => actionsOf(s).includes("dynamodb:BatchGetItem"));
    expect([batch && actionsOf(batch), batch?.Resource]).toEqual([
      ["dynamodb:BatchGetItem"],
      { "Fn::GetAtt": [logicalId(stack, stack.storage.messages), "Arn"] },
    ]);
    // Of each message only when, by whom and whether deleted: never the text (issue 39 §3).
    expect(batch?.Condition).toEqual(ACTIVITY_READ_CONDITION);
    // The correction function: the results table read as the questions route reads it, and
    // only correction items written; the answering message's facts, never its text.
    const writer = roleStatements(template, logicalId(stack, api.corrections.role));
    expect(writer.flatMap(actionsOf).sort()).toEqual(
      [
        "dynamodb:BatchGetItem",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:Query",
        "logs:CreateLogStream",
        "logs:PutLogEvents",
      ].sort(),
    );
    const put = writer.find((s) => actionsOf(s).includes("dynamodb:PutItem"));
    expect([put?.Resource, put?.Condition]).toEqual([
      { "Fn::GetAtt": [logicalId(stack, stack.storage.results), "Arn"] },
      { "ForAllValues:StringEquals": { "dynamodb:Attributes": [...CORRECTION_ATTRIBUTES] } },
    ]);
    const factsRead = writer.find((s) => actionsOf(s).includes("dynamodb:BatchGetItem"));
    expect(factsRead?.Condition).toEqual(ACTIVITY_READ_CONDITION);
    // The read function writes nothing anywhere.
    const writes = (action: string) => /^dynamodb:.*(Put|Update|Delete|Write)/.test(action);
    expect(statements.flatMap(actionsOf).some(writes)).toBe(false);
    const [stage] = Object.values(template.findResources("AWS::ApiGatewayV2::Stage")) as {
      Properties: { AccessLogSettings: { Format: string } };
    }[];
    // Access logs name the route, never the path (a channel id, or anything a caller sent).
    expect(JSON.parse(stage.Properties.AccessLogSettings.Format)).toHaveProperty("routeKey");
    expect(stage.Properties.AccessLogSettings.Format).not.toMatch(/\$context\.(path|requestPath)/);
  });

  it("puts every route the handler serves on the HTTP API, and no other", async () => {
    const { template } = synthesize({ ...NO_BUNDLING, api: "true" });
    const deployed = Object.values(template.findResources("AWS::ApiGatewayV2::Route")).map(
      (r) => (r as { Properties: { RouteKey: string } }).Properties.RouteKey,
    );
    // What the handler (and so `serve`) answers: each route of the one list, by each method.
    const handle = apiHandler(memoryApiSources({ channels: [] }));
    const served: string[] = [];
    for (const route of API_ROUTES) {
      for (const method of API_METHODS) {
        const rawPath = route.replace(/\{(\w+)\}/g, "$1");
        const response = await handle({ method, rawPath, rawQuery: "", headers: {} });
        expect(response.route, `${method} ${rawPath}`).toBe(`${method} ${route}`);
        served.push(`${method} ${route}`);
      }
    }
    for (const route of API_WRITE_ROUTES) {
      for (const method of API_WRITE_METHODS) {
        const rawPath = route.replace(/\{(\w+)\}/g, "$1");
        const response = await handle({ method, rawPath, rawQuery: "", headers: {} });
        expect(response.route, `${method} ${rawPath}`).toBe(`${method} ${route}`);
        served.push(`${method} ${route}`);
      }
    }
    expect(deployed.sort()).toEqual(served.sort());
  });

  it("with apiJwtIssuer: every route JWT-authorized by that issuer and audience", () => {
    const { template, report } = synthesize({
      ...NO_BUNDLING,
      api: "true",
      apiJwtIssuer: "https://issuer.example.com/pool",
      apiJwtAudience: "client-a,client-b",
    });
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
    template.hasResourceProperties("AWS::ApiGatewayV2::Authorizer", {
      AuthorizerType: "JWT",
      JwtConfiguration: {
        Issuer: "https://issuer.example.com/pool",
        Audience: ["client-a", "client-b"],
      },
    });
    const routes = Object.values(template.findResources("AWS::ApiGatewayV2::Route"));
    expect(
      routes.every(
        (r) =>
          (r as { Properties: { AuthorizationType: string } }).Properties.AuthorizationType ===
          "JWT",
      ),
    ).toBe(true);
  });
});
