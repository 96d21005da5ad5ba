/** The deployed search index in the stack: off by default; a private bucket, a layer, least privilege. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { PipelineFunction } from "../../infra/function.js";
import { LAYER_MODULES, SEARCH_MEMORY, searchBundling } from "../../infra/search.js";
import type { ConvosegStack } from "../../infra/stack.js";
import { actionsOf, logicalId, roleStatements, type Statement, synthesize } from "./synth.js";

// Bundling skipped: the layer's npm install and the functions' esbuild are not run; these stacks
// are read for their resources and policies only.
const NO_BUNDLING = { "aws:cdk:bundling-stacks": [] };
const ON = { ...NO_BUNDLING, search: "true", api: "true" };

interface FunctionResource {
  Properties: {
    Layers?: unknown[];
    MemorySize: number;
    Environment?: { Variables: Record<string, unknown> };
  };
}

/** The four functions that open the index, by what they may do with it. */
function searchFunctions(stack: ConvosegStack): Record<string, PipelineFunction> {
  const api = stack.api;
  if (api === undefined) throw new Error("the read API is not deployed");
  return {
    api: api.function,
    ingest: stack.ingestion.function,
    extract: stack.extraction.function,
    erase: stack.erasure.function,
  };
}

const s3Statements = (statements: Statement[]) =>
  statements.filter((s) => actionsOf(s).some((a) => a.startsWith("s3:")));

describe("the search index in the stack", () => {
  it("is not deployed by default: no bucket of its own, no layer, no SEARCH_INDEX_URI", () => {
    const { stack, template } = synthesize({ ...NO_BUNDLING, api: "true", digest: "false" });
    expect(stack.search).toBeUndefined();
    template.resourceCountIs("AWS::S3::Bucket", 0);
    template.resourceCountIs("AWS::Lambda::LayerVersion", 0);
    for (const fn of Object.values(template.findResources("AWS::Lambda::Function"))) {
      const { Properties } = fn as FunctionResource;
      expect(Properties.Layers).toBeUndefined();
      expect(Properties.Environment?.Variables ?? {}).not.toHaveProperty("SEARCH_INDEX_URI");
    }
    expect(stack.config.search).toBe(false);
  });

  it("refuses a search setting that is not true or false, naming it", () => {
    expect(() => synthesize({ ...NO_BUNDLING, search: "yes" })).toThrow(/invalid setting search/);
  });

  it("with search: a private, encrypted, unversioned bucket kept with the data, cdk-nag clean", () => {
    const { stack, template, report } = synthesize(ON);
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
    const search = stack.search;
    if (search === undefined) throw new Error("search is not deployed");
    const id = logicalId(stack, search.bucket);
    const bucket = template.findResources("AWS::S3::Bucket")[id] as {
      Properties: Record<string, unknown>;
      DeletionPolicy: string;
    };
    expect(bucket.DeletionPolicy).toBe("Retain");
    expect(bucket.Properties).toMatchObject({
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          { ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } },
        ],
      },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      LifecycleConfiguration: {
        Rules: [
          expect.objectContaining({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }),
        ],
      },
    });
    // An old version would keep the words an erasure removed.
    expect(bucket.Properties).not.toHaveProperty("VersioningConfiguration");
    const policies = Object.values(template.findResources("AWS::S3::BucketPolicy")).filter((p) =>
      JSON.stringify(p).includes(id),
    );
    expect(JSON.stringify(policies)).toContain('"aws:SecureTransport":"false"');

    const destroyed = synthesize({ ...ON, dataRemovalPolicy: "destroy" });
    const destroyedId = logicalId(destroyed.stack, destroyed.stack.search?.bucket as never);
    expect(
      (
        destroyed.template.findResources("AWS::S3::Bucket")[destroyedId] as {
          DeletionPolicy: string;
        }
      ).DeletionPolicy,
    ).toBe("Delete");
  });

  it("gives the layer, SEARCH_INDEX_URI and the memory to the four functions that open it, to no other", () => {
    const { stack, template } = synthesize(ON);
    const search = stack.search;
    if (search === undefined) throw new Error("search is not deployed");
    template.hasResourceProperties("AWS::Lambda::LayerVersion", {
      CompatibleArchitectures: ["arm64"],
      CompatibleRuntimes: ["nodejs22.x"],
    });
    const layerId = stack.getLogicalId(search.layer.node.defaultChild as never);
    const functions = template.findResources("AWS::Lambda::Function");
    const uri = {
      "Fn::Join": ["", ["s3://", { Ref: logicalId(stack, search.bucket) }, "/search"]],
    };
    const opening = searchFunctions(stack);
    for (const [name, fn] of Object.entries(opening)) {
      const { Properties } = functions[logicalId(stack, fn.function)] as FunctionResource;
      expect(Properties.Layers, name).toEqual([{ Ref: layerId }]);
      expect(Properties.Environment?.Variables.SEARCH_INDEX_URI, name).toEqual(uri);
      expect(Properties.MemorySize, name).toBe(SEARCH_MEMORY[name as keyof typeof SEARCH_MEMORY]);
      // Kept as the tables keep things by default: no retention, so none is set.
      expect(Properties.Environment?.Variables ?? {}, name).not.toHaveProperty(
        "SEARCH_RETENTION_DAYS",
      );
    }
    const ids = new Set(Object.values(opening).map((fn) => logicalId(stack, fn.function)));
    for (const [id, fn] of Object.entries(functions)) {
      if (ids.has(id)) continue;
      const { Properties } = fn as FunctionResource;
      expect(Properties.Layers, id).toBeUndefined();
      expect(Properties.Environment?.Variables ?? {}, id).not.toHaveProperty("SEARCH_INDEX_URI");
    }
  });

  it("grants each function the least it needs, under the search/ prefix only", () => {
    const { stack, template } = synthesize(ON);
    const search = stack.search;
    if (search === undefined) throw new Error("search is not deployed");
    const bucketId = logicalId(stack, search.bucket);
    const expected: Record<string, string[]> = {
      // The API reads; every writer may merge a channel's index and remove its old versions
      // (ingestion's redaction, extraction), and the erasure purges them: all three delete.
      api: ["s3:GetObject"],
      ingest: ["s3:AbortMultipartUpload", "s3:DeleteObject", "s3:GetObject", "s3:PutObject"],
      extract: ["s3:AbortMultipartUpload", "s3:DeleteObject", "s3:GetObject", "s3:PutObject"],
      erase: ["s3:AbortMultipartUpload", "s3:DeleteObject", "s3:GetObject", "s3:PutObject"],
    };
    for (const [name, fn] of Object.entries(searchFunctions(stack))) {
      const statements = s3Statements(roleStatements(template, logicalId(stack, fn.role))).filter(
        (s) => JSON.stringify(s.Resource).includes(bucketId),
      );
      const list = statements.filter((s) => actionsOf(s).includes("s3:ListBucket"));
      expect(list, name).toHaveLength(1);
      expect(list[0]?.Resource, name).toEqual({ "Fn::GetAtt": [bucketId, "Arn"] });
      expect(list[0]?.Condition, name).toEqual({
        StringLike: { "s3:prefix": ["search", "search/*"] },
      });
      const objects = statements.filter((s) => !actionsOf(s).includes("s3:ListBucket"));
      expect(objects, name).toHaveLength(1);
      expect(actionsOf(objects[0] as Statement).sort(), name).toEqual(expected[name]);
      expect(objects[0]?.Resource, name).toEqual({
        "Fn::Join": ["", [{ "Fn::GetAtt": [bucketId, "Arn"] }, "/search/*"]],
      });
    }
    // Nobody else reaches the index.
    const roles = new Set(
      Object.values(searchFunctions(stack)).map((fn) => logicalId(stack, fn.role)),
    );
    for (const [id, policy] of Object.entries(template.findResources("AWS::IAM::Policy"))) {
      const attached = JSON.stringify(
        (policy as { Properties: { Roles: unknown } }).Properties.Roles,
      );
      if ([...roles].some((role) => attached.includes(`"${role}"`))) continue;
      expect(JSON.stringify(policy), id).not.toContain(bucketId);
    }
  });
});

describe("the search layer and bundling", () => {
  it("pins the layer's packages to the versions the code is tested with, the arm64 binary locked", () => {
    const root = JSON.parse(readFileSync("package.json", "utf8")) as {
      dependencies: Record<string, string>;
    };
    const layer = JSON.parse(readFileSync("infra/search-layer/package.json", "utf8")) as {
      dependencies: Record<string, string>;
    };
    const lancedb = root.dependencies["@lancedb/lancedb"];
    expect(layer.dependencies).toEqual({
      "@lancedb/lancedb": lancedb,
      "@lancedb/lancedb-linux-arm64-gnu": lancedb,
      "apache-arrow": root.dependencies["apache-arrow"],
    });
    const lock = JSON.parse(readFileSync("infra/search-layer/package-lock.json", "utf8")) as {
      packages: Record<string, { version?: string; integrity?: string; cpu?: string[] }>;
    };
    const binary = lock.packages["node_modules/@lancedb/lancedb-linux-arm64-gnu"];
    expect(binary).toMatchObject({ version: lancedb, cpu: ["arm64"] });
    expect(binary?.integrity).toMatch(/^sha512-/);
    expect(lock.packages["node_modules/@lancedb/lancedb"]?.version).toBe(lancedb);
  });

  it("imports LanceDB from the layer by path with search on, a stub with it off", () => {
    const on = searchBundling(true);
    expect(on.esbuildArgs).toEqual({
      "--alias:@lancedb/lancedb": `${LAYER_MODULES}/@lancedb/lancedb/dist/index.js`,
    });
    expect(on.externalModules).toEqual([`${LAYER_MODULES}/*`]);
    const off = searchBundling(false);
    expect(off.esbuildArgs?.["--alias:@lancedb/lancedb"]).toMatch(/infra\/search-absent\.cjs$/);
    expect(off.externalModules).toEqual([]);
  });

  it("expires documents with the shorter of the message and result retention", () => {
    for (const [settings, days] of [
      [{ messageRetentionDays: "30" }, "30"],
      [{ messageRetentionDays: "30", resultRetentionDays: "7" }, "7"],
      [{ resultRetentionDays: "90" }, "90"],
    ] as const) {
      const { stack, template } = synthesize({ ...ON, ...settings });
      const functions = template.findResources("AWS::Lambda::Function");
      for (const [name, fn] of Object.entries(searchFunctions(stack))) {
        const { Properties } = functions[logicalId(stack, fn.function)] as FunctionResource;
        expect(Properties.Environment?.Variables.SEARCH_RETENTION_DAYS, name).toBe(days);
      }
    }
  });
});
