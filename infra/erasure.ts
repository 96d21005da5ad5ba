import { type CfnResource, Duration, RemovalPolicy, Stack, Validations } from "aws-cdk-lib";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { LogGroup, type RetentionDays } from "aws-cdk-lib/aws-logs";
import type { IBucket } from "aws-cdk-lib/aws-s3";
import { Secret } from "aws-cdk-lib/aws-secretsmanager";
import {
  Choice,
  Condition,
  CustomState,
  DefinitionBody,
  Fail,
  JsonPath,
  LogLevel,
  Pass,
  StateMachine,
  Succeed,
} from "aws-cdk-lib/aws-stepfunctions";
import { Construct } from "constructs";
import { PipelineFunction } from "./function.js";
import { SEARCH_MEMORY, type SearchIndex, searchFunctionProps } from "./search.js";
import type { Storage } from "./storage.js";

export interface ErasureProps {
  /** The tables it reads and redacts (messages and results), and the channels table's marks. */
  readonly storage: Storage;
  /** Retention of the function's and the state machine's log groups. */
  readonly logRetention: RetentionDays;
  /**
   * The search index, whose documents of the person it removes, with every old version.
   * @default - search off
   */
  readonly search?: SearchIndex;
}

/**
 * Invocations one execution of the state machine makes at most: each runs up to 13 minutes
 * (the function stops starting pages 2 minutes before its 15), so 48 cover about ten hours, far
 * more than the largest erasure measured needs (docs/erasure.md). A run that still answers
 * `done: false` then fails, `ErasureUnfinished`, and a new execution resumes it.
 */
export const MAX_ERASE_INVOCATIONS = 48;

/**
 * The `EraseUser` function (docs/erasure.md): an operator invokes it with `{userId?, user?,
 * channels?, requestedBy}`; it erases page by page under an audit item in the results table and
 * answers `done: false` when near its 15-minute deadline, to be invoked again with the same
 * event. No schedule, no queue, no retries of its own: an operator's request, run one at a time.
 * The `EraseUserLoop` state machine invokes it again until it answers `done: true`.
 */
export class Erasure extends Construct {
  readonly function: PipelineFunction;
  /**
   * The secret audit items' keys are hashed with (HMAC): generated once, never rotated (a
   * rotated one could not find an unfinished erasure's item again), read by the function and by
   * an operator's `npm start -- erase`.
   */
  readonly auditKey: Secret;
  readonly stateMachine: StateMachine;
  readonly stateMachineRole: Role;
  readonly stateMachineLogs: LogGroup;

  constructor(scope: Construct, id: string, props: ErasureProps) {
    super(scope, id);
    this.auditKey = new Secret(this, "AuditKey", {
      description: "convoseg: the key erasure audit items' person keys are hashed with",
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.auditKey).acknowledge({
      id: "AwsSolutions-SMG4",
      reason:
        "A key the audit items' person keys are hashed with: rotating it would lose the way to an unfinished erasure's item (and to the finished ones a repeat answers with).",
    });
    this.function = new PipelineFunction(this, "EraseUser", {
      entry: "functions/erase/handler.ts",
      description: "convoseg EraseUser: erase a person's messages and what was derived from them",
      environment: {
        MESSAGES_TABLE: props.storage.messages.tableName,
        RESULTS_TABLE: props.storage.results.tableName,
        CHANNELS_TABLE: props.storage.channels.tableName,
        AUDIT_KEY_SECRET_ARN: this.auditKey.secretArn,
        POWERTOOLS_SERVICE_NAME: "convoseg-erase",
      },
      timeout: Duration.minutes(15),
      memorySize: props.search ? SEARCH_MEMORY.erase : 512,
      logRetention: props.logRetention,
      ...searchFunctionProps(props.search),
      // Two runs of one erasure at once would fight over its audit item: one at a time.
      reservedConcurrentExecutions: 1,
      // An operator's synchronous call; an asynchronous one is not retried behind their back.
      retryAttempts: 0,
    });
    props.storage.grantErasure(this.function.role);
    // The person's words must not stay in an old version: it purges them.
    props.search?.connect(this.function, "write");
    this.auditKey.grantRead(this.function.role);
    ({
      stateMachine: this.stateMachine,
      role: this.stateMachineRole,
      logs: this.stateMachineLogs,
    } = this.loop(props.logRetention));
  }

  /**
   * Invoke, look at `done`, invoke again with the same event (the function resumes from the
   * audit item, so the event is all the state a run needs), at most {@link MAX_ERASE_INVOCATIONS}
   * times. Each invocation's answer is the function's, `{done, dryRun, counts, byChannel?,
   * audit?: {authorKey, requestedAt, state, runs}}`: counts, channel ids and a hash, never a
   * name or message text. The execution's history holds those and its input, the person's id or
   * name (docs/erasure.md says for how long).
   */
  private loop(logRetention: RetentionDays) {
    const fn = this.function.function;
    const partition = Stack.of(this).partition;
    const invoke = new CustomState(this, "Erase", {
      stateJson: {
        Type: "Task",
        Resource: `arn:${partition}:states:::lambda:invoke`,
        Parameters: { FunctionName: fn.functionArn, "Payload.$": "$.request" },
        // The function's answer without Lambda's envelope (a dry run's has no audit, so no field
        // of it is picked by path: a missing one would fail the state).
        ResultSelector: { "response.$": "$.Payload" },
        ResultPath: "$.run",
      },
    });
    // Throttled (reserved concurrency 1: another erasure is running) or Lambda's own failures:
    // retried with backoff. The function's own errors (a bad event, another run of the same
    // erasure) are not: they fail the execution with the function's error name.
    invoke.addRetry({
      errors: ["Lambda.TooManyRequestsException"],
      interval: Duration.seconds(30),
      maxAttempts: 10,
      backoffRate: 2,
      maxDelay: Duration.minutes(5),
    });
    invoke.addRetry({
      errors: [
        "Lambda.ServiceException",
        "Lambda.AWSLambdaException",
        "Lambda.SdkClientException",
        "Lambda.ClientExecutionTimeoutException",
      ],
      interval: Duration.seconds(2),
      maxAttempts: 6,
      backoffRate: 2,
    });
    const start = new Pass(this, "Start", {
      // The event as the function takes it, and the invocations made so far.
      parameters: { request: JsonPath.entirePayload, invocations: 0 },
    });
    const count = new Pass(this, "Count", {
      parameters: {
        request: JsonPath.objectAt("$.request"),
        invocations: JsonPath.mathAdd(JsonPath.numberAt("$.invocations"), 1),
        run: JsonPath.objectAt("$.run"),
      },
    });
    const done = new Succeed(this, "Done", { outputPath: "$.run.response" });
    const unfinished = new Fail(this, "Unfinished", {
      error: "ErasureUnfinished",
      cause: `still done: false after ${MAX_ERASE_INVOCATIONS} invocations: start a new execution with the same input, which resumes from the audit item`,
    });
    const next = new Choice(this, "IsDone")
      .when(Condition.booleanEquals("$.run.response.done", true), done)
      .when(Condition.numberGreaterThanEquals("$.invocations", MAX_ERASE_INVOCATIONS), unfinished)
      .otherwise(invoke);
    invoke.next(count);
    count.next(next);
    const definition = start.next(invoke);

    const logs = new LogGroup(this, "LoopLogs", {
      retention: logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = new Role(this, "LoopRole", {
      assumedBy: new ServicePrincipal("states.amazonaws.com"),
      description: "convoseg EraseUserLoop: invoke EraseUser until it is done",
    });
    // This function and no version or alias of it: the loop invokes $LATEST only.
    role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ["lambda:InvokeFunction"], resources: [fn.functionArn] }),
    );
    const stateMachine = new StateMachine(this, "Loop", {
      comment: "convoseg EraseUserLoop: EraseUser again until done (docs/erasure.md)",
      definitionBody: DefinitionBody.fromChainable(definition),
      role,
      timeout: Duration.hours(12),
      tracingEnabled: true,
      // Every event, none of its data: states' inputs and outputs hold the person's id or name.
      logs: { destination: logs, level: LogLevel.ALL, includeExecutionData: false },
    });
    Validations.of(role).acknowledge({
      id: "AwsSolutions-IAM5[Resource::*]",
      reason:
        "Step Functions' log delivery (logs:CreateLogDelivery, PutResourcePolicy, DescribeLogGroups and the rest) and X-Ray's PutTraceSegments and GetSamplingRules take no resource-level permission: AWS documents Resource * for them, and they reach no data of the deployment.",
    });
    return { stateMachine, role, logs };
  }

  /**
   * Has the erasure follow the scheduled digests: they quote questions and answers in their
   * askers' words, so a period citing the person goes, every version of it (docs/erasure.md).
   * The role lists the bucket's versions and reads and deletes them under the digests' prefix.
   */
  followDigests(bucket: IBucket, prefix: string): void {
    this.function.function.addEnvironment("DIGEST_BUCKET", bucket.bucketName);
    const role = this.function.role;
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["s3:ListBucketVersions"],
        resources: [bucket.bucketArn],
        conditions: { StringLike: { "s3:prefix": [`${prefix}*`] } },
      }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["s3:GetObjectVersion", "s3:DeleteObjectVersion"],
        resources: [bucket.arnForObjects(`${prefix}*`)],
      }),
    );
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(bucket.node.defaultChild as CfnResource)}.Arn>/${prefix}*]`,
      reason:
        "A digest's keys carry the day of its period (digests/<yyyy-mm-dd>/digest.json): the erasure reads and deletes versions under that prefix of the digest bucket only.",
    });
  }
}
