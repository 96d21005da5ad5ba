/**
 * Extraction on the local emulators: the extraction consumer (`lib/knowledge`, what
 * `functions/extract` runs) for a local pipeline's segment queue, and the configuration every
 * local command that extracts (`run`, `import --extract`) shares.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { EXTRACT_DEFAULTS, type ExtractFunctionConfig } from "convoseg/knowledge/config";
import { KnowledgeReader } from "convoseg/knowledge/read";
import {
  DEFAULT_RETRY,
  type ExtractionMetricName,
  type ExtractionMetrics,
  extractDependencies,
  linkAdvisorOf,
  type SegmentConsumerDependencies,
  segmentConsumer,
} from "convoseg/knowledge/write";
import type { LinkAdvisor } from "convoseg/linker";
import type { BatchHandler } from "./event-source.js";
import { LLMFailureBudget, type LLMFailureCause, type StoppedExtraction } from "./llm-failures.js";
import type { LocalModel } from "./model.js";

export interface LocalExtractionOptions extends LocalModel {
  /** The client extraction reads and writes with (its reads are not the tick's). */
  dynamodb: DynamoDBClient;
  analyzer: ExtractFunctionConfig["analyzer"];
  /** The output-token limit of every model call (default the deployment's, 4096). */
  maxOutputTokens?: number;
  /**
   * Stop extracting after this many failed model calls in a row with the same cause (see
   * {@link LLMFailureBudget}); default: never, every segment is retried until given up on.
   */
  failureBudget?: number;
  /** Told of each cause of failed model calls the first time it is seen. */
  onLLMFailure?: (cause: LLMFailureCause) => void;
  /** The lease owner of every extraction (a workspace's own; default: one per extraction). */
  leaseOwner?: string;
}

export interface LocalExtraction {
  reader: KnowledgeReader;
  resultsTable: string;
  /** Every metric the consumer reported, summed by name. */
  metrics: Map<ExtractionMetricName, number>;
  /** Set once the failure budget stopped extraction. */
  readonly stopped: StoppedExtraction | undefined;
  /**
   * The segments given up on, by id: after how many failed attempts, and whether at the first
   * because no retry could have fixed it.
   */
  readonly givenUp: ReadonlyMap<string, GivenUp>;
}

export interface GivenUp {
  attempts: number;
  /** At its first failure: a retry could not succeed (a refused request). */
  permanent: boolean;
  /** The last failure, as the consumer logs it (its name, code and message; never chat text). */
  cause: string;
}

/**
 * Where the consumer moves a segment it gives up on, and after how many failed attempts: at
 * once when a retry cannot succeed (a refused request); a reply invalid after its repair after
 * fewer attempts than other failures (INVALID_OUTPUT_ATTEMPTS).
 */
export interface LocalDeadLetters {
  sqs: SQSClient;
  queueUrl: string;
  maxAttempts: number;
}

/**
 * The extraction function's configuration for a local command: its tables, its model, the
 * analysis, and the output-token limit (default the deployment's); the deployment's cut of long
 * messages, a lease of 5 minutes (a local attempt is short) and window replies kept 15 days, as
 * deployed. An OpenAI-compatible endpoint's API key is read from `OPENAI_API_KEY` by the adapter.
 */
export function localExtractConfig(
  tables: { resultsTable: string; messagesTable: string },
  model: LocalModel,
  analyzer: ExtractFunctionConfig["analyzer"],
  maxOutputTokens = Number(EXTRACT_DEFAULTS.MAX_OUTPUT_TOKENS),
): ExtractFunctionConfig {
  return {
    ...tables,
    extractor: model.extractor,
    modelId: model.modelId,
    baseURL: model.extractor === "openai" ? model.endpoint : undefined,
    bedrockOutput: "tool",
    analyzer,
    maxOutputTokens,
    maxTurnChars: Number(EXTRACT_DEFAULTS.MAX_TURN_CHARS),
    leaseMs: 5 * 60_000,
    windowOutputTtlMs: 15 * 86_400_000,
    reextractChangedShare: Number(EXTRACT_DEFAULTS.REEXTRACT_CHANGED_SHARE),
  };
}

/** The consumer's dependencies for a local command: quiet logs, metrics to `add` if given. */
export function localExtractDependencies(
  config: ExtractFunctionConfig,
  model: LocalModel,
  env: {
    dynamodb: DynamoDBClient;
    metrics?: ExtractionMetrics;
    now?: () => number;
    leaseOwner?: string;
  },
): SegmentConsumerDependencies {
  const quiet = () => {};
  return extractDependencies(config, {
    dynamodb: env.dynamodb,
    bedrockEndpoint: model.extractor === "bedrock" ? model.endpoint : undefined,
    ...(model.apiKey === undefined ? {} : { apiKey: model.apiKey }),
    bedrockRegion: process.env.AWS_REGION,
    metrics: env.metrics ?? { add: quiet },
    logger: { info: quiet, warn: quiet, error: quiet },
    now: env.now,
    leaseOwner: env.leaseOwner === undefined ? undefined : () => env.leaseOwner as string,
  });
}

/**
 * The reply linker's advisor on the model a local command extracts with (`run --ask-links`),
 * wired as a deployment with `askLinks` wires it: the model's own adapter, its output limit.
 */
export function localLinkAdvisor(
  tables: { resultsTable: string; messagesTable: string },
  options: LocalExtractionOptions,
): LinkAdvisor {
  const config = localExtractConfig(tables, options, options.analyzer, options.maxOutputTokens);
  const quiet = () => {};
  return linkAdvisorOf(config, {
    dynamodb: options.dynamodb,
    bedrockEndpoint: options.extractor === "bedrock" ? options.endpoint : undefined,
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
    bedrockRegion: process.env.AWS_REGION,
    metrics: { add: quiet },
    logger: { info: quiet, warn: quiet, error: quiet },
  });
}

/**
 * The extraction consumer of a local pipeline's segment queue, as the function handles a batch,
 * writing to `tables.resultsTable` (which the pipeline creates with its other tables), and what
 * it extracted: a reader of the results and the consumer's metrics.
 */
export function localExtraction(
  tables: { resultsTable: string; messagesTable: string },
  options: LocalExtractionOptions,
  deadLetters?: LocalDeadLetters,
): { handler: BatchHandler; extraction: LocalExtraction } {
  const config = localExtractConfig(tables, options, options.analyzer, options.maxOutputTokens);
  const metrics = new Map<ExtractionMetricName, number>();
  const givenUp = new Map<string, GivenUp>();
  const deps = localExtractDependencies(config, options, {
    dynamodb: options.dynamodb,
    metrics: { add: (name, value) => metrics.set(name, (metrics.get(name) ?? 0) + value) },
    leaseOwner: options.leaseOwner,
  });
  if (deadLetters !== undefined) {
    const quiet = () => {};
    deps.sqs = deadLetters.sqs;
    deps.deadLetterQueueUrl = deadLetters.queueUrl;
    deps.retry = { ...DEFAULT_RETRY, maxAttempts: deadLetters.maxAttempts };
    deps.logger = {
      info: quiet,
      warn: quiet,
      // A model's failure is named by the run as it happens (onLLMFailure); the cause kept here
      // also names the others (a failing table, a fault of the extractor).
      error: (message, attributes) => {
        const { segmentId: id, attempt, permanent, error } = attributes;
        if (!message.startsWith("gave up on segment") || typeof id !== "string") return;
        givenUp.set(id, {
          attempts: typeof attempt === "number" ? attempt : deadLetters.maxAttempts,
          permanent: permanent === true,
          cause: causeOf(error),
        });
      },
    };
  }
  const budget =
    options.failureBudget === undefined
      ? undefined
      : new LLMFailureBudget({
          model: options,
          limit: options.failureBudget,
          onFailure: options.onLLMFailure,
        });
  const handler = segmentConsumer(
    budget ? { ...deps, extractor: budget.guard(deps.extractor) } : deps,
  );
  return {
    handler,
    extraction: {
      reader: new KnowledgeReader({ client: options.dynamodb, tableName: tables.resultsTable }),
      resultsTable: tables.resultsTable,
      metrics,
      get stopped() {
        return budget?.stopped;
      },
      givenUp,
    },
  };
}

/**
 * A failure as the consumer's log attributes describe it (`describe`), in one line; not an
 * invalid reply's `reason`, which may quote the reply.
 */
function causeOf(described: unknown): string {
  if (typeof described !== "object" || described === null) return "unknown failure";
  const { name, code, message, kind, status } = described as Record<string, unknown>;
  const label = [name, code].filter((part) => typeof part === "string").join(" ");
  const detail = [message, kind, status === undefined ? undefined : `status ${status}`]
    .filter((part) => part !== undefined && part !== "")
    .map(String)
    .join(", ");
  return [label, detail].filter((part) => part !== "").join(": ") || "unknown failure";
}
