/**
 * Extraction on the local emulators: a results table beside a local pipeline's tables, and the
 * extraction consumer (`lib/knowledge`, what `functions/extract` runs) attached to its segment
 * queue as Lambda's event source would run it. Used by `npm start -- run` and its tests.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  createResultsTable,
  type ExtractFunctionConfig,
  type ExtractionMetricName,
  type ExtractorKind,
  extractDependencies,
  KnowledgeReader,
  segmentConsumer,
} from "../lib/knowledge/index.js";
import type { LocalPipeline } from "./pipeline.js";

export interface LocalExtractionOptions {
  dynamodb: DynamoDBClient;
  extractor: ExtractorKind;
  modelId: string;
  /** The OpenAI-compatible base URL, or a Bedrock endpoint override. */
  endpoint?: string;
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
  bedrock: "amazon.nova-lite-v1:0",
};

/**
 * Creates the results table and attaches the consumer to `pipeline`'s queue: from then on each
 * `drain` of the pipeline extracts what it receives. An OpenAI-compatible endpoint's API key is
 * read from `OPENAI_API_KEY` by the adapter.
 */
export async function attachExtraction(
  pipeline: LocalPipeline,
  options: LocalExtractionOptions,
): Promise<LocalExtraction> {
  const resultsTable = pipeline.config.messagesTable.replace(/-messages$/, "-results");
  await createResultsTable(options.dynamodb, resultsTable);
  const config: ExtractFunctionConfig = {
    resultsTable,
    messagesTable: pipeline.config.messagesTable,
    extractor: options.extractor,
    modelId: options.modelId,
    baseURL: options.extractor === "openai" ? options.endpoint : undefined,
    bedrockOutput: "tool",
    analyzer: options.analyzer,
    leaseMs: 5 * 60_000,
    windowOutputTtlMs: 15 * 86_400_000,
  };
  const metrics = new Map<ExtractionMetricName, number>();
  const quiet = () => {};
  pipeline.consumeWith(
    segmentConsumer(
      extractDependencies(config, {
        dynamodb: options.dynamodb,
        bedrockEndpoint: options.extractor === "bedrock" ? options.endpoint : undefined,
        bedrockRegion: process.env.AWS_REGION,
        metrics: { add: (name, value) => metrics.set(name, (metrics.get(name) ?? 0) + value) },
        logger: { info: quiet, warn: quiet, error: quiet },
      }),
    ),
  );
  return {
    reader: new KnowledgeReader({ client: options.dynamodb, tableName: resultsTable }),
    resultsTable,
    metrics,
  };
}
