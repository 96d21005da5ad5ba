import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SQSClient } from "@aws-sdk/client-sqs";
import {
  Analyzer,
  BedrockConverseLLM,
  type Extractor,
  KEYPHRASE_EXTRACTOR_NAME,
  KEYPHRASE_EXTRACTOR_VERSION,
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

/** The model adapter an LLM-backed configuration names. */
function createLLM(
  config: ExtractFunctionConfig & { extractor: "bedrock" | "openai" },
  env: ExtractEnvironment,
): LLM {
  switch (config.extractor) {
    case "bedrock":
      return new BedrockConverseLLM({
        modelId: config.modelId,
        output: config.bedrockOutput,
        maxTokens: config.maxOutputTokens,
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
        maxTokens: config.maxOutputTokens,
      });
  }
}

/**
 * The configured extractor with what its results are keyed by: the offline extractor under its
 * own name (which says it is no LLM) and version; otherwise the analyzer on `llm` (default: the
 * configured adapter), under the model id and the prompt version of its route.
 */
function createExtractor(
  config: ExtractFunctionConfig,
  env: ExtractEnvironment,
  llm: LLM | undefined,
): { extractor: Extractor; model: string; promptVersion: string } {
  if (config.extractor === "offline" && llm === undefined) {
    return {
      extractor: new KeyphraseExtractor(),
      model: KEYPHRASE_EXTRACTOR_NAME,
      promptVersion: KEYPHRASE_EXTRACTOR_VERSION,
    };
  }
  const model =
    llm ?? createLLM(config as ExtractFunctionConfig & { extractor: "bedrock" | "openai" }, env);
  return {
    extractor: new Analyzer(model, { ...config.analyzer, maxTurnChars: config.maxTurnChars }),
    model: config.extractor === "offline" ? KEYPHRASE_EXTRACTOR_NAME : config.modelId,
    promptVersion: promptVersionOf(config.analyzer),
  };
}

/**
 * Wires the consumer from the function's configuration: the Lambda handler and the local run
 * (`npm start -- run`) share it, so both run the same code. `llm` replaces the configured
 * adapter behind the analyzer (tests).
 */
export function extractDependencies(
  config: ExtractFunctionConfig,
  env: ExtractEnvironment,
  llm?: LLM,
): SegmentConsumerDependencies {
  const { extractor, model, promptVersion } = createExtractor(config, env, llm);
  return {
    extractor: new SegmentExtractor({
      store: new DynamoDbResultStore({ client: env.dynamodb, tableName: config.resultsTable }),
      extractor,
      model,
      promptVersion,
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
