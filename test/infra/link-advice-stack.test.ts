/**
 * The tick's link advisor in the stack (`askLinks`): off by default, the tick may call no model
 * and reads no extraction settings; on, it reads extraction's model settings under its own, may
 * call that model, and may keep extraction's token counters, naming only their attributes.
 */
import { describe, expect, it } from "vitest";
import {
  actionsOf,
  logicalId,
  modelArn,
  roleStatements,
  type Statement,
  synthesize,
} from "./synth.js";

// Bundling skipped: the functions' esbuild is not run; the stacks are read for their policies.
const NO_BUNDLING = { "aws:cdk:bundling-stacks": [] };

interface FunctionResource {
  Properties: { Environment?: { Variables: Record<string, unknown> } };
}

function tick(context: Record<string, unknown>) {
  const { stack, template, report } = synthesize({ ...NO_BUNDLING, ...context });
  const { function: fn } = stack.segmentation;
  const resource = template.findResources("AWS::Lambda::Function")[
    logicalId(stack, fn.function)
  ] as FunctionResource;
  return {
    variables: resource.Properties.Environment?.Variables ?? {},
    statements: roleStatements(template, logicalId(stack, fn.role)),
    report,
  };
}

const calls = (statements: Statement[], action: string) =>
  statements.filter((s) => actionsOf(s).includes(action));

describe("the link advisor in the stack", () => {
  it("is off by default: ASK_LINKS false, no model, no results table", () => {
    const { variables, statements } = tick({});
    expect(variables.ASK_LINKS).toBe("false");
    expect(variables).not.toHaveProperty("MODEL_ID");
    expect(variables).not.toHaveProperty("RESULTS_TABLE");
    expect(calls(statements, "bedrock:InvokeModel")).toEqual([]);
    expect(calls(statements, "dynamodb:GetItem")).toEqual([]);
  });

  it("with askLinks: the model's settings, the model, and only the token counters", () => {
    const { variables, statements, report } = tick({ askLinks: "true" });
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
    expect(variables.ASK_LINKS).toBe("true");
    expect(variables).toHaveProperty("MODEL_ID");
    expect(variables).toHaveProperty("RESULTS_TABLE");
    // Its own lease, not extraction's.
    expect(variables.LEASE).toBe("270000");
    const model = variables.MODEL_ID as string;
    expect(calls(statements, "bedrock:InvokeModel").map((s) => s.Resource)).toContainEqual(
      modelArn(model),
    );
    const counters = calls(statements, "dynamodb:GetItem");
    expect(counters).toHaveLength(1);
    expect(actionsOf(counters[0] as Statement).sort()).toEqual([
      "dynamodb:GetItem",
      "dynamodb:UpdateItem",
    ]);
    expect(counters[0]?.Condition).toMatchObject({
      "ForAllValues:StringEquals": {
        "dynamodb:Attributes": ["channel", "item", "v", "tokens", "expiresAt"],
      },
    });
  });

  it("refuses an askLinks setting that is not true or false, naming it", () => {
    expect(() => tick({ askLinks: "yes" })).toThrow(/invalid setting askLinks/);
  });
});
