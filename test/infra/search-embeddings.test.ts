/**
 * The search index's embeddings model in the stack (`searchEmbeddingsModel`): off by default;
 * set, the functions that write the index and the read API get `SEARCH_EMBEDDINGS_MODEL` and
 * may invoke that model only, and nothing else gets either.
 */
import { describe, expect, it } from "vitest";
import type { ConvosegStack } from "../../infra/stack.js";
import { actionsOf, logicalId, roleStatements, type Statement, synthesize } from "./synth.js";

const NO_BUNDLING = { "aws:cdk:bundling-stacks": [] };
const ON = { ...NO_BUNDLING, search: "true", api: "true" };
const TITAN = "amazon.titan-embed-text-v2:0";
/** The Discord ask endpoint: its answer function reads the index, by its words only. */
const ASK = { askDiscordPublicKey: "a".repeat(64) };

interface FunctionResource {
  Properties: { Environment?: { Variables: Record<string, unknown> } };
}

/** The functions that embed with the index's model: its writers and the read API. */
function embedding(stack: ConvosegStack) {
  if (stack.api === undefined) throw new Error("the read API is not deployed");
  return {
    api: stack.api.function,
    ingest: stack.ingestion.function,
    extract: stack.extraction.function,
    erase: stack.erasure.function,
  };
}

const invokes = (statements: Statement[]) =>
  statements.filter((s) => JSON.stringify(s.Resource).includes("titan-embed"));

describe("the search index's embeddings model in the stack", () => {
  it("is off by default: no function gets SEARCH_EMBEDDINGS_MODEL or the model", () => {
    const { stack, template } = synthesize(ON);
    expect(stack.config.searchEmbeddings).toBeUndefined();
    for (const [id, fn] of Object.entries(template.findResources("AWS::Lambda::Function"))) {
      const variables = (fn as FunctionResource).Properties.Environment?.Variables ?? {};
      expect(variables, id).not.toHaveProperty("SEARCH_EMBEDDINGS_MODEL");
    }
    expect(JSON.stringify(template.findResources("AWS::IAM::Policy"))).not.toContain("titan-embed");
  });

  it("set, gives the writers and the read API the model and InvokeModel on it alone, cdk-nag clean", () => {
    const { stack, template, report } = synthesize({
      ...ON,
      ...ASK,
      searchEmbeddingsModel: TITAN,
    });
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
    expect(stack.config.searchEmbeddings).toEqual({ modelId: TITAN });
    const functions = template.findResources("AWS::Lambda::Function");
    const model = {
      "Fn::Join": [
        "",
        [
          "arn:",
          { Ref: "AWS::Partition" },
          ":bedrock:",
          { Ref: "AWS::Region" },
          `::foundation-model/${TITAN}`,
        ],
      ],
    };
    const granted = embedding(stack);
    for (const [name, fn] of Object.entries(granted)) {
      const { Properties } = functions[logicalId(stack, fn.function)] as FunctionResource;
      expect(Properties.Environment?.Variables.SEARCH_EMBEDDINGS_MODEL, name).toBe(TITAN);
      const statements = invokes(roleStatements(template, logicalId(stack, fn.role)));
      expect(statements, name).toHaveLength(1);
      expect(actionsOf(statements[0] as Statement), name).toEqual(["bedrock:InvokeModel"]);
      expect(statements[0]?.Resource, name).toEqual(model);
      expect(statements[0]?.Condition, name).toBeUndefined();
    }
    // Nobody else: the ask answer function reads the index by its words.
    const ids = new Set(Object.values(granted).map((fn) => logicalId(stack, fn.function)));
    expect(stack.ask.discord?.answer).toBeDefined();
    for (const [id, fn] of Object.entries(functions)) {
      if (ids.has(id)) continue;
      const variables = (fn as FunctionResource).Properties.Environment?.Variables ?? {};
      expect(variables, id).not.toHaveProperty("SEARCH_EMBEDDINGS_MODEL");
    }
    const roles = new Set(Object.values(granted).map((fn) => logicalId(stack, fn.role)));
    for (const [id, policy] of Object.entries(template.findResources("AWS::IAM::Policy"))) {
      const attached = JSON.stringify(
        (policy as { Properties: { Roles: unknown } }).Properties.Roles,
      );
      if ([...roles].some((role) => attached.includes(`"${role}"`))) continue;
      expect(JSON.stringify(policy), id).not.toContain("titan-embed");
    }
  });

  it.each([
    [
      { ...NO_BUNDLING, searchEmbeddingsModel: TITAN },
      /searchEmbeddingsModel.*set search=true too/,
    ],
    [
      { ...ON, searchEmbeddingsModel: "arn:aws:bedrock:us-east-1::foundation-model/x" },
      /searchEmbeddingsModel.*Titan text embeddings model id/,
    ],
    [{ ...ON, searchEmbeddingsModel: "amazon.nova-lite-v1:0" }, /Titan text embeddings/],
  ])("refuses %o, naming the setting", (context, message) => {
    expect(() => synthesize(context)).toThrow(message);
  });
});
