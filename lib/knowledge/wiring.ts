import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SQSClient } from "@aws-sdk/client-sqs";
import {
  Analyzer,
  BedrockConverseLLM,
  KEYPHRASE_EXTRACTOR_NAME,
  KeyphraseExtractor,
  type LLM,
  OpenAICompatibleLLM,
} from "../extraction/index.js";
import { DynamoDbStore } from "../history/index.js";
import type { ExtractFunctionConfig } from "./config.js";
import type {
  ExtractionLogger,
  ExtractionMetrics,
  SegmentConsumerDependencies,
} from "./consumer.js";
import { promptVersionOf, SegmentExtractor } from "./extract-segment.js";
import { DynamoDbResultStore } from "./store.js";

export interface ExtractEnvironment {
  dynamodb: DynamoDBClient;
  metrics: ExtractionMetrics;
  logger: ExtractionLogger;
  /** The OpenAI-compatible endpoint's API key, already fetched from where the config says. */
  apiKey?: string;
  /** A Bedrock endpoint other than the region's (a local run's `--llm-endpoint`). */
  bedrockEndpoint?: string;
  /** The clock leases and timestamps use (default: the wall clock). */
  now?: () => number;
  /** For retry backoff on failed records (see `SegmentConsumerDependencies.sqs`). */
  sqs?: SQSClient;
  /** The region of a Bedrock endpoint override (default us-east-1). */
  bedrockRegion?: string;
}

/** The model adapter the configuration names. */
function createLLM(config: ExtractFunctionConfig, env: ExtractEnvironment): LLM {
  switch (config.extractor) {
    case "bedrock":
      return new BedrockConverseLLM({
        modelId: config.modelId,
        output: config.bedrockOutput,
        client:
          env.bedrockEndpoint === undefined
            ? undefined
            : new BedrockRuntimeClient({
                endpoint: env.bedrockEndpoint,
                region: env.bedrockRegion ?? "us-east-1",
              }),
      });
    case "openai":
      return new OpenAICompatibleLLM({
        baseURL: config.baseURL,
        apiKey: env.apiKey,
        model: config.modelId,
      });
    case "offline":
      return new KeyphraseExtractor();
  }
}

/** The model id results are keyed by: the offline extractor's name says it is no LLM. */
function modelKey(config: ExtractFunctionConfig): string {
  return config.extractor === "offline" ? KEYPHRASE_EXTRACTOR_NAME : config.modelId;
}

/**
 * Wires the consumer from the function's configuration: the Lambda handler and the local run
 * (`npm start -- run`) share it, so both run the same code. `llm` replaces the configured
 * adapter (tests, and the local run's usage counting).
 */
export function extractDependencies(
  config: ExtractFunctionConfig,
  env: ExtractEnvironment,
  llm: LLM = createLLM(config, env),
): SegmentConsumerDependencies {
  return {
    extractor: new SegmentExtractor({
      store: new DynamoDbResultStore({ client: env.dynamodb, tableName: config.resultsTable }),
      analyzer: new Analyzer(llm, config.analyzer),
      model: modelKey(config),
      promptVersion: promptVersionOf(config.analyzer),
      leaseMs: config.leaseMs,
      retentionMs: config.windowOutputTtlMs,
      now: env.now,
    }),
    messages: new DynamoDbStore({ client: env.dynamodb, tableName: config.messagesTable }),
    messagesTable: config.messagesTable,
    metrics: env.metrics,
    logger: env.logger,
    sqs: env.sqs,
  };
}
