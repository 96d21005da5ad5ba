import { readFileSync } from "node:fs";
import { join } from "node:path";
import { App, type CfnResource, Validations } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import type { PolicyValidationReportJson } from "aws-cdk-lib/cloud-assembly-schema";
import type { CloudAssembly } from "aws-cdk-lib/cx-api";
import { AwsSolutionsChecks } from "cdk-nag";
import type { IConstruct } from "constructs";
import { ConvosegStack, type ConvosegStackProps } from "../../infra/stack.js";

export interface Synthesized {
  stack: ConvosegStack;
  template: Template;
  assembly: CloudAssembly;
  /** CDK's validation report: the findings cdk-nag did not find acknowledged. */
  report: PolicyValidationReportJson;
}

/**
 * Synthesizes the stack once, with the AwsSolutions checks registered as `infra/app.ts` does,
 * with the given CDK context and props. Each call bundles both functions (a few seconds).
 */
export function synthesize(
  context: Record<string, unknown> = {},
  props: ConvosegStackProps = {},
): Synthesized {
  const app = new App({ context });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  const stack = new ConvosegStack(app, "Test", props);
  const template = Template.fromStack(stack);
  const assembly = app.synth();
  const report = JSON.parse(
    readFileSync(join(assembly.directory, "validation-report.json"), "utf8"),
  ) as PolicyValidationReportJson;
  return { stack, template, assembly, report };
}

/** The logical id of a construct's CloudFormation resource. */
export function logicalId(stack: ConvosegStack, construct: IConstruct): string {
  return stack.getLogicalId(construct.node.defaultChild as CfnResource);
}

export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Principal?: unknown;
  Condition?: unknown;
}

/**
 * What a reader of a digest's activity may read of the messages table: the key, the id, when,
 * by whom (display name), whether deleted, the platform, thread, guild and public group's name
 * (for its permalink); a request must name them (never the text).
 */
export const ACTIVITY_READ_CONDITION = {
  "ForAllValues:StringEquals": {
    "dynamodb:Attributes": [
      "conversation",
      "key",
      "id",
      "ts",
      "author",
      "kind",
      "deleted",
      "platform",
      "thread",
      "guild",
      "chatUsername",
    ],
  },
  StringEqualsIfExists: { "dynamodb:Select": "SPECIFIC_ATTRIBUTES" },
};

/** The read API's channel list: of a channel's arrivals, when, whether deleted, name, platform. */
export const CHANNEL_FACTS_CONDITION = {
  "ForAllValues:StringEquals": {
    "dynamodb:Attributes": [
      "conversation",
      "key",
      "position",
      "ts",
      "deleted",
      "channelName",
      "platform",
    ],
  },
  StringEqualsIfExists: { "dynamodb:Select": "SPECIFIC_ATTRIBUTES" },
};

/** The statements of every resource of `type` that has a `PolicyDocument` (or `KeyPolicy`). */
export function statementsOf(template: Template, type: string): Statement[] {
  return Object.values(template.findResources(type)).flatMap((resource) => {
    const properties = (resource as { Properties: Record<string, { Statement: Statement[] }> })
      .Properties;
    return (properties.PolicyDocument ?? properties.KeyPolicy).Statement;
  });
}

/** The statements of the inline policies attached to a role. */
export function roleStatements(template: Template, roleId: string): Statement[] {
  return Object.values(
    template.findResources("AWS::IAM::Policy", {
      Properties: { Roles: [{ Ref: roleId }] },
    }),
  ).flatMap(
    (policy) =>
      (policy as { Properties: { PolicyDocument: { Statement: Statement[] } } }).Properties
        .PolicyDocument.Statement,
  );
}

export const actionsOf = (statement: Statement): string[] =>
  Array.isArray(statement.Action) ? statement.Action : [statement.Action];

/** A `Fn::Join` ARN as the CDK writes it: `arn:` and this stack's partition, then `parts`. */
export function partitionArn(...parts: unknown[]) {
  return { "Fn::Join": ["", ["arn:", { Ref: "AWS::Partition" }, ...parts]] };
}

/** The foundation-model ARN of `model` in this stack's region. */
export const modelArn = (model: string) =>
  partitionArn(":bedrock:", { Ref: "AWS::Region" }, `::foundation-model/${model}`);
