/**
 * The deployed search index on the stack's tables: `SEARCH_INDEX_URI` names it (the stack's
 * bucket and prefix); unset, search is off and nothing here is built. `SEARCH_EMBEDDINGS_MODEL`
 * (a Bedrock Titan embeddings model) adds vectors and hybrid ranking.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDbStore } from "../../../history/dynamodb/index.js";
import { BedrockTitanEmbedder } from "../../../knowledge/extraction/llm/index.js";
import { KnowledgeReader } from "../../../knowledge/read/index.js";
import { DynamoDbResultStore } from "../../../knowledge/store/index.js";
import { SearchError } from "../errors.js";
import { SearchIndexer } from "../indexer.js";

const DAY_MS = 24 * 60 * 60 * 1000;

import { type ChannelIndexesOptions, LanceChannelIndexes } from "./channels.js";

interface DeployedSearchOptions extends Omit<ChannelIndexesOptions, "retentionMs"> {
  /** Where the index is: `s3://bucket/prefix` or a directory; undefined or "": search is off. */
  uri: string | undefined;
  /** `SEARCH_RETENTION_DAYS`: days a document is kept after its time; undefined or "": kept. */
  retentionDays?: string | undefined;
  /**
   * `SEARCH_EMBEDDINGS_MODEL`: the Bedrock Titan embeddings model whose vectors the index
   * keeps (region, credentials and endpoint from the environment); undefined or "": keywords only.
   */
  embeddingsModel?: string | undefined;
  client: DynamoDBClient;
  resultsTable: string;
  messagesTable: string;
}

/** The index's writer on the tables, or undefined when search is off. */
export function deployedSearchIndexer(options: DeployedSearchOptions): SearchIndexer | undefined {
  const { client, resultsTable, messagesTable, ...where } = options;
  const index = deployedSearchIndex(where);
  if (index === undefined) return undefined;
  const reader = new KnowledgeReader({ client, tableName: resultsTable });
  const results = new DynamoDbResultStore({ client, tableName: resultsTable });
  return new SearchIndexer({
    index,
    results,
    corrections: (channel) => results.listCorrections(channel),
    messages: new DynamoDbStore({ client, tableName: messagesTable }),
    topics: (channel) => reader.topics(channel),
  });
}

/** The index itself (what the read API searches), or undefined when search is off. */
export function deployedSearchIndex(
  options: Pick<
    DeployedSearchOptions,
    | "uri"
    | "retentionDays"
    | "embeddingsModel"
    | "storageOptions"
    | "now"
    | "readConsistencySeconds"
  >,
): LanceChannelIndexes | undefined {
  const uri = options.uri?.trim();
  if (uri === undefined || uri === "") return undefined;
  const { retentionDays, embeddingsModel, ...rest } = options;
  const model = embeddingsModel?.trim() ?? "";
  const days = retentionDays?.trim() ?? "";
  if (days !== "" && !/^[1-9]\d{0,5}$/.test(days))
    throw new SearchError(
      "SEARCH_INVALID_RETENTION",
      `search: SEARCH_RETENTION_DAYS must be a whole number of days from 1 (got ${JSON.stringify(days.slice(0, 20))})`,
    );
  return new LanceChannelIndexes(uri, {
    ...rest,
    ...(days !== "" && { retentionMs: Number(days) * DAY_MS }),
    ...(model !== "" && { embedder: new BedrockTitanEmbedder({ modelId: model }) }),
  });
}

/** The deployed index's settings in a function's environment, as the stack sets them. */
export function searchEnvironment(
  env: Readonly<Record<string, string | undefined>>,
): Pick<DeployedSearchOptions, "uri" | "retentionDays" | "embeddingsModel"> {
  return {
    uri: env.SEARCH_INDEX_URI,
    retentionDays: env.SEARCH_RETENTION_DAYS,
    embeddingsModel: env.SEARCH_EMBEDDINGS_MODEL,
  };
}
