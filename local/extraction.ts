/**
 * Extraction on the local emulators: a results table beside a local pipeline's tables, and the
 * extraction consumer (`lib/knowledge`, what `functions/extract` runs) attached to its segment
 * queue as Lambda's event source would run it; and the configuration every local command that
 * extracts (`run`, `import --extract`) shares.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  createResultsTable,
  DEFAULT_BEDROCK_MODEL_ID,
  type ExtractFunctionConfig,
  type ExtractionMetricName,
  type ExtractionMetrics,
  type ExtractorKind,
  extractDependencies,
  KnowledgeReader,
  type SegmentConsumerDependencies,
  segmentConsumer,
} from "../lib/knowledge/index.js";
import type { LocalPipeline } from "./pipeline.js";

export interface LocalExtractionOptions extends LocalModel {
  dynamodb: DynamoDBClient;
  analyzer: ExtractFunctionConfig["analyzer"];
}

export interface LocalExtraction {
  reader: KnowledgeReader;
  resultsTable: string;
  /** Every metric the consumer reported, summed by name. */
  metrics: Map<ExtractionMetricName, number>;
}

/** Default models when `--model` is not given. */
export const DEFAULT_MODELS: Record<Exclude<ExtractorKind, "offline">, string> = {
  openai: "gpt-4o-mini",
  bedrock: DEFAULT_BEDROCK_MODEL_ID,
};

/** The model a local command extracts with. */
export interface LocalModel {
  extractor: ExtractorKind;
  modelId: string;
  /** The OpenAI-compatible base URL, or a Bedrock endpoint override. */
  endpoint?: string;
}

/**
 * The extraction function's configuration for a local command: its tables, its model, and the
 * analysis; a lease of 5 minutes (a local attempt is short) and window replies kept 15 days, as
 * deployed. An OpenAI-compatible endpoint's API key is read from `OPENAI_API_KEY` by the adapter.
 */
export function localExtractConfig(
  tables: { resultsTable: string; messagesTable: string },
  model: LocalModel,
  analyzer: ExtractFunctionConfig["analyzer"],
): ExtractFunctionConfig {
  return {
    ...tables,
    extractor: model.extractor,
    modelId: model.modelId,
    baseURL: model.extractor === "openai" ? model.endpoint : undefined,
    bedrockOutput: "tool",
    analyzer,
    leaseMs: 5 * 60_000,
    windowOutputTtlMs: 15 * 86_400_000,
  };
}

/** The consumer's dependencies for a local command: quiet logs, metrics to `add` if given. */
export function localExtractDependencies(
  config: ExtractFunctionConfig,
  model: LocalModel,
  env: { dynamodb: DynamoDBClient; metrics?: ExtractionMetrics; now?: () => number },
): SegmentConsumerDependencies {
  const quiet = () => {};
  return extractDependencies(config, {
    dynamodb: env.dynamodb,
    bedrockEndpoint: model.extractor === "bedrock" ? model.endpoint : undefined,
    bedrockRegion: process.env.AWS_REGION,
    metrics: env.metrics ?? { add: quiet },
    logger: { info: quiet, warn: quiet, error: quiet },
    now: env.now,
  });
}

/**
 * Creates the results table and attaches the consumer to `pipeline`'s queue: from then on each
 * `drain` of the pipeline extracts what it receives.
 */
export async function attachExtraction(
  pipeline: LocalPipeline,
  options: LocalExtractionOptions,
): Promise<LocalExtraction> {
  const resultsTable = pipeline.config.messagesTable.replace(/-messages$/, "-results");
  await createResultsTable(options.dynamodb, resultsTable);
  const config = localExtractConfig(
    { resultsTable, messagesTable: pipeline.config.messagesTable },
    options,
    options.analyzer,
  );
  const metrics = new Map<ExtractionMetricName, number>();
  pipeline.consumeWith(
    segmentConsumer(
      localExtractDependencies(config, options, {
        dynamodb: options.dynamodb,
        metrics: { add: (name, value) => metrics.set(name, (metrics.get(name) ?? 0) + value) },
      }),
    ),
  );
  return {
    reader: new KnowledgeReader({ client: options.dynamodb, tableName: resultsTable }),
    resultsTable,
    metrics,
  };
}
