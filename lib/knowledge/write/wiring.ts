import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDbStore } from "../../history/dynamodb/index.js";
import type { LinkAdvisor } from "../../segmentation/linker/index.js";
import type { ExtractFunctionConfig } from "../config/config.js";
import { Analyzer, type Extractor, type LLM } from "../extraction/index.js";
import { BedrockConverseLLM, OpenAICompatibleLLM } from "../extraction/llm/index.js";
import {
  KEYPHRASE_EXTRACTOR_NAME,
  KEYPHRASE_EXTRACTOR_VERSION,
  KeyphraseExtractor,
} from "../extraction/offline/index.js";
import { DynamoDbResultStore } from "../store/dynamodb.js";
import { DynamoDbLedger } from "../store/ledger.js";
import type { MessageStates } from "../store/message-states.js";
import type { SegmentEnvelope } from "../store/segment-envelope.js";
import type { ApiKeyCache } from "./api-key.js";
import type { SegmentConsumerDependencies } from "./consumer.js";
import type { ExtractionLogger, ExtractionMetrics } from "./consumer-report.js";
import { promptVersionOf, SegmentExtractor } from "./extract-segment.js";
import { type CircuitBreaker, guardedLLM, TokenBudget } from "./guard.js";
import { type LinkAdvisorOptions, linkAdvisor } from "./link-advisor.js";
import {
  KnowledgeRedactor,
  type KnowledgeRedactorOptions,
  type RequestReextraction,
} from "./redact.js";
import { DEFAULT_RETRY } from "./retry.js";
import { storedMessageStates } from "./stored-states.js";

export interface ExtractEnvironment {
  dynamodb: DynamoDBClient;
  metrics: ExtractionMetrics;
  logger: ExtractionLogger;
  /**
   * The OpenAI-compatible endpoint's API key: the key, or the cache that reads it from where the
   * config says (read again after a 401/403 and at its cache age).
   */
  apiKey?: string | ApiKeyCache;
  /**
   * The circuit breaker over the provider's failures (the function keeps one per execution
   * environment). Default: none, every call is made.
   */
  breaker?: CircuitBreaker;
  /** A Bedrock endpoint other than the region's (a local run's `--llm-endpoint`). */
  bedrockEndpoint?: string;
  /** The clock leases and timestamps use (default: the wall clock). */
  now?: () => number;
  /**
   * Who holds a segment's lease while extracting it (default: a new id per extraction). A local
   * workspace, which one command opens at a time, passes its own: a lease that a killed command
   * left is then taken at once instead of waited out.
   */
  leaseOwner?: () => string;
  /** For retry backoff on failed records (see `SegmentConsumerDependencies.sqs`). */
  sqs?: SQSClient;
  /** The region of a Bedrock endpoint override (default us-east-1). */
  bedrockRegion?: string;
  /**
   * The message store's current states, by which segments are extracted as the store holds them
   * now and a change during an extraction is redacted (`SegmentConsumerDependencies.current`).
   * @default the messages table's, read strongly consistent by key
   */
  messageStates?: MessageStates;
  /** Sends a segment to be extracted again (`KnowledgeRedactorOptions`); without it, never. */
  requestReextraction?: RequestReextraction;
  /** The search index's writer (convoseg/search's `SearchIndexer`); without it, none is kept. */
  search?: SearchWriter;
}

/** What keeps a search index following the results: told each one stored and each redacted. */
interface SearchWriter {
  stored: NonNullable<SegmentConsumerDependencies["indexed"]>;
  redacted: NonNullable<KnowledgeRedactorOptions["onRedacted"]>;
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
        deadlineMs: config.llmDeadlineMs,
        client:
          env.bedrockEndpoint === undefined
            ? undefined
            : new BedrockRuntimeClient({
                endpoint: env.bedrockEndpoint,
                region: env.bedrockRegion ?? "us-east-1",
              }),
      });
    case "openai": {
      const key = env.apiKey;
      return new OpenAICompatibleLLM({
        baseURL: config.baseURL,
        apiKey: typeof key === "object" ? () => key.get() : key,
        model: config.modelId,
        maxTokens: config.maxOutputTokens,
        deadlineMs: config.llmDeadlineMs,
      });
    }
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
  budget: TokenBudget | undefined,
): {
  extractor: Extractor | ((segment: SegmentEnvelope) => Extractor);
  model: string;
  promptVersion: string;
} {
  if (config.extractor === "offline" && llm === undefined) {
    return {
      extractor: new KeyphraseExtractor(),
      model: KEYPHRASE_EXTRACTOR_NAME,
      promptVersion: KEYPHRASE_EXTRACTOR_VERSION,
    };
  }
  const model =
    llm ?? createLLM(config as ExtractFunctionConfig & { extractor: "bedrock" | "openai" }, env);
  const key = env.apiKey;
  const analyzerOptions = { ...config.analyzer, maxTurnChars: config.maxTurnChars };
  const guard = {
    budget,
    breaker: env.breaker,
    onOpen: () =>
      env.logger.error("the model provider keeps failing: circuit breaker open", {
        model: config.modelId,
      }),
    // A rotated or replaced key is read again by the next call.
    onAuthFailure: () => (typeof key === "object" ? key.invalidate() : undefined),
    onCountError: (error: unknown) =>
      env.logger.warn("could not count a call's tokens against the budget", {
        error: (error as Error).name,
      }),
  };
  return {
    // Each segment's calls count against its channel's budget.
    extractor:
      budget === undefined && env.breaker === undefined
        ? new Analyzer(model, analyzerOptions)
        : (segment) =>
            new Analyzer(
              guardedLLM(model, { ...guard, channel: segment.channel }),
              analyzerOptions,
            ),
    model: config.extractor === "offline" ? KEYPHRASE_EXTRACTOR_NAME : config.modelId,
    promptVersion: promptVersionOf(config.analyzer, {
      showSystemLines: config.showSystemMessages,
    }),
  };
}

/** The daily token budget the configuration sets, on the results table's counters. */
function tokenBudgetOf(
  config: ExtractFunctionConfig,
  ledger: DynamoDbLedger,
  env: ExtractEnvironment,
): TokenBudget | undefined {
  return config.dailyTokenBudget === undefined
    ? undefined
    : new TokenBudget({
        counter: ledger,
        daily: config.dailyTokenBudget,
        perChannel: config.channelTokenBudget,
        now: env.now,
      });
}

/**
 * The reply linker's advisor on the configured model, each call counted against the same daily
 * token budgets as extraction's (deployment and channel) and behind the same breaker. `llm`
 * replaces the configured adapter (tests).
 */
export function linkAdvisorOf(
  config: ExtractFunctionConfig,
  env: ExtractEnvironment,
  options: Omit<LinkAdvisorOptions, "llm"> = {},
  llm?: LLM,
): LinkAdvisor {
  if (config.extractor === "offline" && llm === undefined)
    throw new RangeError("asking links needs a model: the extractor is offline");
  const model =
    llm ?? createLLM(config as ExtractFunctionConfig & { extractor: "bedrock" | "openai" }, env);
  const ledger = new DynamoDbLedger({ client: env.dynamodb, tableName: config.resultsTable });
  const budget = tokenBudgetOf(config, ledger, env);
  return linkAdvisor({
    ...options,
    llm: (channel) => guardedLLM(model, { budget, breaker: env.breaker, channel }),
  });
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
  const ledger = new DynamoDbLedger({
    client: env.dynamodb,
    tableName: config.resultsTable,
    retentionMs: config.windowOutputTtlMs,
    now: env.now,
  });
  const budget = tokenBudgetOf(config, ledger, env);
  const { extractor, model, promptVersion } = createExtractor(config, env, llm, budget);
  const store = new DynamoDbResultStore({ client: env.dynamodb, tableName: config.resultsTable });
  const messages = new DynamoDbStore({ client: env.dynamodb, tableName: config.messagesTable });
  // The consumer reads its segment's messages as stored now, before and after extracting: a
  // deletion or edit landing meanwhile is redacted, not stored (docs/extraction.md).
  const states = env.messageStates ?? storedMessageStates(messages);
  return {
    extractor: new SegmentExtractor({
      store,
      extractor,
      model,
      promptVersion,
      leaseMs: config.leaseMs,
      retentionMs: config.windowOutputTtlMs,
      resultRetentionMs: config.resultRetentionMs,
      now: env.now,
      owner: env.leaseOwner,
      showSystemLines: config.showSystemMessages ?? false,
    }),
    messages,
    messagesTable: config.messagesTable,
    metrics: env.metrics,
    logger: env.logger,
    sqs: env.sqs,
    // Only where SQS retries by the consumer's delays (deployed): a local run retries by its own.
    ...(env.sqs && {
      attempts: ledger,
      deadLetterQueueUrl: config.deadLetterQueueUrl,
      retry: { ...DEFAULT_RETRY, maxAttempts: config.maxAttempts ?? DEFAULT_RETRY.maxAttempts },
    }),
    now: env.now,
    current: {
      states,
      redactor: new KnowledgeRedactor({
        store,
        states,
        reextractChangedShare: config.reextractChangedShare,
        requestReextraction: env.requestReextraction,
        metrics: env.metrics,
        ...(env.search && { onRedacted: env.search.redacted.bind(env.search) }),
      }),
    },
    ...(env.search && { indexed: env.search.stored.bind(env.search) }),
  };
}
