import { type Duration, RemovalPolicy, Validations } from "aws-cdk-lib";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Architecture, type ILayerVersion, Runtime } from "aws-cdk-lib/aws-lambda";
import { NodejsFunction, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import { LogGroup, type RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";

/**
 * How every function is bundled (by the local esbuild): ESM for Node 22, minified with source
 * maps. Minifying renames classes, which is why every error class sets a literal `name`
 * (`test/infra/bundle.emulator.test.ts` reads them from a bundle built with these options).
 */
export const BUNDLING = {
  target: "node22",
  minify: true,
  sourceMap: true,
  // The SDK v3 ships in the Lambda runtime; bundling it would add ~600 KB.
  externalModules: ["@aws-sdk/*"],
  // Powertools has CommonJS parts that call require() inside an ESM bundle.
  banner:
    "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
} as const;

export interface PipelineFunctionProps {
  /** The handler module, relative to the repository root (`functions/ingest/handler.ts`). */
  readonly entry: string;
  /** The function's and its role's description. */
  readonly description: string;
  /** The function's environment (`NODE_OPTIONS` is added for the source maps). */
  readonly environment: Readonly<Record<string, string>>;
  readonly timeout: Duration;
  /** In MB. */
  readonly memorySize: number;
  /** Retention of the function's own log group. */
  readonly logRetention: RetentionDays;
  /**
   * Concurrency reserved for the function, which is also its limit.
   * @default - none: the account's unreserved concurrency
   */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Asynchronous invocations (the schedule): retries of a failed run.
   * @default 2 (Lambda's)
   */
  readonly retryAttempts?: number;
  /**
   * Asynchronous invocations: how long an event may wait to be run.
   * @default Duration.hours(6) (Lambda's)
   */
  readonly maxEventAge?: Duration;
  /**
   * Layers: the search index's (LanceDB's native binary cannot be bundled).
   * @default - none
   */
  readonly layers?: ILayerVersion[];
  /**
   * Bundling beside {@link BUNDLING}: more external modules, and esbuild arguments (aliases).
   * @default - none
   */
  readonly bundling?: {
    readonly externalModules?: readonly string[];
    readonly esbuildArgs?: Readonly<Record<string, string>>;
  };
}

/**
 * A pipeline Lambda: bundled by the local esbuild (no Docker) as ESM for Node 22 on arm64, with
 * its own log group (retention set) and its own role that may write to that log group and
 * nothing else until granted. No AWS managed policy: AWSLambdaBasicExecutionRole would allow
 * creating and writing any log group in the account.
 */
export class PipelineFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: PipelineFunctionProps) {
    super(scope, id);
    this.logGroup = new LogGroup(this, "Logs", {
      retention: props.logRetention,
      // Logs expire anyway; the tables are what `dataRemovalPolicy` keeps.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.role = new Role(this, "Role", {
      assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
      description: props.description,
    });
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["logs:CreateLogStream", "logs:PutLogEvents"],
        resources: [this.logGroup.logGroupArn],
      }),
    );
    this.function = new NodejsFunction(this, "Function", {
      entry: new URL(`../${props.entry}`, import.meta.url).pathname,
      handler: "handler",
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize,
      timeout: props.timeout,
      role: this.role,
      logGroup: this.logGroup,
      // Minified bundles: stack traces in the logs need the source maps.
      environment: { ...props.environment, NODE_OPTIONS: "--enable-source-maps" },
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      retryAttempts: props.retryAttempts,
      maxEventAge: props.maxEventAge,
      layers: props.layers,
      bundling: {
        ...BUNDLING,
        externalModules: [...BUNDLING.externalModules, ...(props.bundling?.externalModules ?? [])],
        ...(props.bundling?.esbuildArgs && { esbuildArgs: { ...props.bundling.esbuildArgs } }),
        format: OutputFormat.ESM,
      },
    });
    Validations.of(this.function).acknowledge({
      id: "AwsSolutions-L1",
      reason:
        "Pinned to nodejs22.x (an LTS line Lambda supports into 2027) to match the esbuild target and the Node versions the code is tested on; the rule flags any runtime older than the newest the CDK knows, and runtime upgrades are made deliberately.",
    });
  }
}
