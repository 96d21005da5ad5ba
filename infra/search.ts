import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  type CfnResource,
  DockerImage,
  Duration,
  type RemovalPolicy,
  Stack,
  Validations,
} from "aws-cdk-lib";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import {
  Architecture,
  Code,
  type ILayerVersion,
  LayerVersion,
  Runtime,
} from "aws-cdk-lib/aws-lambda";
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from "aws-cdk-lib/aws-s3";
import { Construct } from "constructs";
import type { PipelineFunction, PipelineFunctionProps } from "./function.js";

/** Where Lambda puts a layer's `nodejs/node_modules`. */
export const LAYER_MODULES = "/opt/nodejs/node_modules";
/** The index's prefix in its bucket: one LanceDB database, a table per channel. */
const SEARCH_PREFIX = "search";
/** The environment variable that turns search on in a function (absent: /search answers 501). */
const SEARCH_INDEX_URI = "SEARCH_INDEX_URI";
const SEARCH_RETENTION_DAYS = "SEARCH_RETENTION_DAYS";
const SEARCH_EMBEDDINGS_MODEL = "SEARCH_EMBEDDINGS_MODEL";

/**
 * Memory of the functions that open the index, in MB, with search on (docs/deploy.md#search):
 * the native library alone takes about 105 MB once loaded, and Lambda's CPU grows with memory.
 * The erasure rewrites a channel's table whole, so it gets a full vCPU (1,769 MB).
 */
export const SEARCH_MEMORY = {
  api: 1024,
  ask: 1024,
  extract: 1024,
  ingest: 512,
  erase: 1769,
} as const;

/** The layer's packages, pinned with their lockfile (test/infra/search-stack.test.ts checks it). */
const LAYER_SOURCE = new URL("./search-layer/", import.meta.url).pathname;
/** What the bundles hold in place of LanceDB when search is off. */
const ABSENT = new URL("./search-absent.cjs", import.meta.url).pathname;

/**
 * `npm ci` for arm64 Linux on any build machine: the lockfile's packages and integrity hashes.
 * `--force` only lets the arm64 binary (a direct dependency of the layer's package.json) past
 * the platform check of an x64 machine; `--omit=optional` leaves out LanceDB's optional
 * `openai` and `@huggingface/transformers` (and the other platforms' binaries).
 */
const LAYER_INSTALL = [
  "ci",
  "--force",
  "--cpu=arm64",
  "--os=linux",
  "--libc=glibc",
  "--omit=optional",
  "--omit=dev",
  "--ignore-scripts",
  "--no-audit",
  "--no-fund",
];

/**
 * How the functions that may open the index are bundled. LanceDB loads a `.node` binary, which
 * esbuild cannot bundle, so it is never in a bundle: with search on, its import becomes the
 * layer's file by absolute path (an ESM bundle does not search NODE_PATH on stock Node; Lambda's
 * runtime patches that, but the absolute path works either way, and was run so on Node 20);
 * with search off, a stub (the functions then have no layer, and an import that cannot be
 * found would fail their cold start). Apache Arrow is pure JavaScript and bundled.
 */
export function searchBundling(
  enabled: boolean,
  modules: string = LAYER_MODULES,
): NonNullable<PipelineFunctionProps["bundling"]> {
  return {
    // The file, not the folder: an ES module cannot import a directory.
    esbuildArgs: {
      "--alias:@lancedb/lancedb": enabled ? `${modules}/@lancedb/lancedb/dist/index.js` : ABSENT,
    },
    externalModules: enabled ? [`${modules}/*`] : [],
  };
}

/** What a function may do with the index. */
export type SearchAccess = "read" | "write";

/**
 * LanceDB on S3: a read is GETs (ranged) and LISTs; a commit PUTs new data files and then the
 * version's manifest with `If-None-Match` (no rename), large files in parts. A writer deletes
 * too: every write may merge a channel's index and remove versions over a day old, and the
 * erasure purges them all.
 */
const OBJECT_ACTIONS: Record<SearchAccess, string[]> = {
  read: ["s3:GetObject"],
  write: ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload", "s3:DeleteObject"],
};

export interface SearchIndexProps {
  /** `dataRemovalPolicy`: the index is derived, but a rebuild re-reads every table. */
  readonly removalPolicy: RemovalPolicy;
  /**
   * Days a document is kept after its time: the shorter of the message and result retention,
   * so that no document outlives what it was made from.
   * @default - kept, as the tables keep them
   */
  readonly retentionDays?: number;
  /**
   * The Titan embeddings model whose vectors the index keeps (hybrid ranking).
   * @default - keywords only
   */
  readonly embeddingsModel?: string;
}

/**
 * The deployed search index (docs/search.md#deployed), with `search`: a LanceDB database at
 * `s3://<bucket>/search`, one table per channel, in a private, encrypted bucket of its own
 * without versioning (an old object version would keep the words an erasure removed), and the
 * arm64 layer holding LanceDB and its native binary. {@link connect} gives a function the layer,
 * `SEARCH_INDEX_URI` and the least access it needs.
 */
export class SearchIndex extends Construct {
  readonly bucket: Bucket;
  readonly layer: ILayerVersion;
  /** `s3://<bucket>/search`, the functions' `SEARCH_INDEX_URI`. */
  readonly uri: string;
  private readonly retentionDays: number | undefined;
  private readonly embeddingsModel: string | undefined;

  constructor(scope: Construct, id: string, props: SearchIndexProps) {
    super(scope, id);
    this.retentionDays = props.retentionDays;
    this.embeddingsModel = props.embeddingsModel;
    this.bucket = new Bucket(this, "Bucket", {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: false,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: props.removalPolicy,
      // A writer that died mid-upload leaves parts nobody lists.
      lifecycleRules: [{ abortIncompleteMultipartUploadAfter: Duration.days(1) }],
    });
    Validations.of(this.bucket).acknowledge({
      id: "AwsSolutions-S1",
      reason:
        "The bucket holds only the search index the stack's own functions write and read through IAM, which CloudTrail records. Server access logs would need a second bucket, and would name the objects a search touched.",
    });
    this.uri = `s3://${this.bucket.bucketName}/${SEARCH_PREFIX}`;
    this.layer = new LayerVersion(this, "LanceDb", {
      description: "convoseg search: @lancedb/lancedb 0.31.0 with its arm64 binary, apache-arrow",
      code: layerCode(),
      compatibleArchitectures: [Architecture.ARM_64],
      compatibleRuntimes: [Runtime.NODEJS_22_X],
    });
  }

  /**
   * Gives `fn` (bundled with {@link searchFunctionProps}) `SEARCH_INDEX_URI`, the retention
   * (`SEARCH_RETENTION_DAYS`, where documents expire) and `access` to the
   * index's prefix: LIST under it, and the object actions of {@link OBJECT_ACTIONS}. With an
   * embeddings model, a function that `embeds` (every writer, and the read API's hybrid
   * queries; by default the writers) gets `SEARCH_EMBEDDINGS_MODEL` and may invoke that model
   * in this region, nothing else of Bedrock.
   */
  connect(fn: PipelineFunction, access: SearchAccess, embeds: boolean = access === "write"): void {
    fn.function.addEnvironment(SEARCH_INDEX_URI, this.uri);
    if (this.retentionDays !== undefined)
      fn.function.addEnvironment(SEARCH_RETENTION_DAYS, String(this.retentionDays));
    const role = fn.role;
    if (this.embeddingsModel !== undefined && embeds) {
      fn.function.addEnvironment(SEARCH_EMBEDDINGS_MODEL, this.embeddingsModel);
      const model = Stack.of(this).formatArn({
        service: "bedrock",
        account: "",
        resource: "foundation-model",
        resourceName: this.embeddingsModel,
      });
      role.addToPrincipalPolicy(
        new PolicyStatement({ actions: ["bedrock:InvokeModel"], resources: [model] }),
      );
    }
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["s3:ListBucket"],
        resources: [this.bucket.bucketArn],
        // The database's own listing asks for `search/`; a table's, for paths under it.
        conditions: { StringLike: { "s3:prefix": [SEARCH_PREFIX, `${SEARCH_PREFIX}/*`] } },
      }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: OBJECT_ACTIONS[access],
        resources: [this.bucket.arnForObjects(`${SEARCH_PREFIX}/*`)],
      }),
    );
    const bucketId = Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnResource);
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${SEARCH_PREFIX}/*]`,
      reason: `LanceDB names its files itself (a table per channel, data files, deletion files, indexes and a manifest per version, under ${SEARCH_PREFIX}/<channel>.lance/): the role may ${access} objects under that prefix of the search bucket only.`,
    });
  }
}

/** The layer and the bundling of a function that may open the index (none: search off). */
export function searchFunctionProps(
  search: SearchIndex | undefined,
): Pick<PipelineFunctionProps, "layers" | "bundling"> {
  return {
    bundling: searchBundling(search !== undefined),
    ...(search !== undefined && { layers: [search.layer] }),
  };
}

/**
 * The layer's asset: `nodejs/node_modules` installed from infra/search-layer's lockfile by the
 * local npm (about 160 MB unzipped, 60 MB zipped: docs/deploy.md#search), or in the SAM build
 * image where the local npm fails. Built only when the stack is bundled with search on; tests
 * that skip bundling (`aws:cdk:bundling-stacks`) hash the lockfile instead.
 */
function layerCode(): Code {
  const script = `mkdir -p /asset-output/nodejs && cp package.json package-lock.json /asset-output/nodejs/ && cd /asset-output/nodejs && npm ${LAYER_INSTALL.join(" ")}`;
  return Code.fromAsset(LAYER_SOURCE, {
    bundling: {
      image: DockerImage.fromRegistry("public.ecr.aws/sam/build-nodejs22.x"),
      command: ["bash", "-c", script],
      environment: { npm_config_cache: "/tmp/npm-cache" },
      local: {
        tryBundle(outputDir) {
          const target = join(outputDir, "nodejs");
          mkdirSync(target, { recursive: true });
          for (const file of ["package.json", "package-lock.json"]) {
            copyFileSync(join(LAYER_SOURCE, file), join(target, file));
          }
          try {
            execFileSync("npm", LAYER_INSTALL, {
              cwd: target,
              stdio: ["ignore", "ignore", "inherit"],
            });
          } catch {
            return false;
          }
          return true;
        },
      },
    },
  });
}
