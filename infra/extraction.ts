import { Duration, Stack, Validations } from "aws-cdk-lib";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { Construct, type IConstruct } from "constructs";
import {
  bedrockModel,
  type ConvosegConfig,
  checkExtractEnvironment,
  type ExtractConfig,
  extractEnvironment,
} from "./config.js";
import { PipelineFunction } from "./function.js";
import type { QueueWithDeadLetters } from "./queues.js";
import { SEARCH_MEMORY, type SearchIndex, searchFunctionProps } from "./search.js";
import type { Storage } from "./storage.js";

export interface ExtractionProps {
  /** The tables it reads (messages) and writes (results). */
  readonly storage: Storage;
  /** The validated settings: the model, the route, the timeout and the concurrency. */
  readonly config: ConvosegConfig;
  /** The segment queue the tick sends to; its visibility timeout is sized for this function. */
  readonly segments: QueueWithDeadLetters;
  /**
   * The search index it keeps (extracted segments in, compaction with its cleanup).
   * @default - search off
   */
  readonly search?: SearchIndex;
}

/**
 * Segments consumed by a FIFO queue's invocation at once. The consumer extracts a FIFO batch's
 * records one after another (each channel's in order), so a batch keeps at most
 * `llmConcurrency` model calls in flight however large it is; five spares invocations without
 * making a batch much longer than its largest segment: the timeout is sized for one largest
 * segment at its worst, and ordinary segments are a fraction of that. A batch that still runs
 * out of time is retried: its finished segments come back as already extracted, the others
 * reuse their stored window replies.
 */
const FIFO_BATCH_SIZE = 5;
/**
 * On a standard queue the consumer extracts a batch's records all at once: one record per
 * invocation keeps the model calls in flight at `extractConcurrency` x `llmConcurrency`, the rate
 * limit the settings promise, and the timeout sized for the segment it holds.
 */
const STANDARD_BATCH_SIZE = 1;

/**
 * The extraction function: closed segments from the segment queue (partial batch failures with
 * backoff; after `extractMaxAttempts` failed attempts the function moves a segment to the
 * queue's DLQ itself) to candidate topics, written to the results table. Its concurrency, the event source's maximum, is the deployment's rate limit on the
 * model. It may call the configured model only, read messages by key (reference-form segments)
 * and keep the results table, and, with an OpenAI-compatible endpoint, read the one secret or
 * parameter that holds the API key.
 */
export class Extraction extends Construct {
  readonly function: PipelineFunction;

  constructor(scope: Construct, id: string, props: ExtractionProps) {
    super(scope, id);
    const { config, storage, segments } = props;
    const environment = extractEnvironment(config, {
      resultsTable: storage.results.tableName,
      messagesTable: storage.messages.tableName,
      deadLetterQueueUrl: segments.deadLetterQueue.queueUrl,
      segmentQueueUrl: segments.queue.queueUrl,
    });
    // The environment the function will read at cold start, read the same way now.
    checkExtractEnvironment(environment);
    this.function = new PipelineFunction(this, "Extract", {
      entry: "functions/extract/handler.ts",
      description: "convoseg extraction: closed segments to candidate topics with an LLM",
      environment,
      timeout: Duration.millis(config.extract.timeoutMs),
      memorySize: props.search ? SEARCH_MEMORY.extract : 512,
      logRetention: config.logRetention,
      ...searchFunctionProps(props.search),
    });
    // It compacts the channel's table as it writes: the cleanup deletes old versions' files.
    props.search?.connect(this.function, "write");
    const role = this.function.role;
    storage.grantExtraction(role);
    // A segment whose attempts are used up is moved to the DLQ by the function itself.
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["sqs:SendMessage"],
        resources: [segments.deadLetterQueue.queueArn],
      }),
    );
    segments.allowDeadLetterSender(role.roleArn);
    // A change during an extraction is redacted by the function itself, and past the changed
    // share it sends the segment back, as ingestion's redaction does (lib/knowledge/write/reextraction.ts).
    role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ["sqs:SendMessage"], resources: [segments.queue.queueArn] }),
    );
    segments.allowSender(role.roleArn);
    for (const statement of modelStatements(this.function, config.extract)) {
      role.addToPrincipalPolicy(statement);
    }
    this.function.function.addEventSource(
      new SqsEventSource(segments.queue, {
        batchSize: config.fifo ? FIFO_BATCH_SIZE : STANDARD_BATCH_SIZE,
        reportBatchItemFailures: true,
        maxConcurrency: config.extract.concurrency,
      }),
    );
  }
}

/**
 * What reaching the model takes. Bedrock: {@link bedrockStatements} on the configured model.
 * OpenAI: the key's secret or parameter, and nothing of Bedrock. The extraction function's, and
 * the tick's with `askLinks`.
 */
export function modelStatements(fn: PipelineFunction, extract: ExtractConfig): PolicyStatement[] {
  const stack = Stack.of(fn);
  if (extract.extractor === "openai") {
    const key = extract.apiKey;
    if (key === undefined) return [];
    return [
      key.kind === "secret"
        ? new PolicyStatement({
            actions: ["secretsmanager:GetSecretValue"],
            resources: [key.arn],
          })
        : new PolicyStatement({
            actions: ["ssm:GetParameter"],
            resources: [
              stack.formatArn({
                service: "ssm",
                resource: "parameter",
                resourceName: key.name.replace(/^\//, ""),
              }),
            ],
          }),
    ];
  }
  return bedrockStatements(fn.role, extract.modelId);
}

/**
 * `bedrock:InvokeModel` (Converse's permission) on `modelId` in this region for `role`; for a
 * cross-region inference profile, on the profile and on its model in whichever region the
 * profile routes to, only through that profile (acknowledged to cdk-nag on `role`).
 */
export function bedrockStatements(role: IConstruct, modelId: string): PolicyStatement[] {
  const stack = Stack.of(role);
  const model = bedrockModel(modelId);
  const foundationModel = (region?: string) =>
    stack.formatArn({
      service: "bedrock",
      region,
      account: "",
      resource: "foundation-model",
      resourceName: model.modelId,
    });
  if (model.kind === "model") {
    return [
      new PolicyStatement({ actions: ["bedrock:InvokeModel"], resources: [foundationModel()] }),
    ];
  }
  const profile = stack.formatArn({
    service: "bedrock",
    resource: "inference-profile",
    resourceName: model.profileId,
  });
  const anyRegion = foundationModel("*");
  Validations.of(role).acknowledge({
    // The finding as cdk-nag names it: the resource with the partition reference flattened.
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/${model.modelId}]`,
    reason: `The cross-region inference profile ${model.profileId} routes each request to ${model.modelId} in one of its destination regions, which Bedrock authorizes as that region's foundation-model ARN: the region is the only wildcard, the model is exact, and the condition allows it only through this account's profile.`,
  });
  return [
    new PolicyStatement({ actions: ["bedrock:InvokeModel"], resources: [profile] }),
    new PolicyStatement({
      actions: ["bedrock:InvokeModel"],
      resources: [anyRegion],
      conditions: { StringEquals: { "bedrock:InferenceProfileArn": profile } },
    }),
  ];
}
