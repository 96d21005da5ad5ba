/**
 * The deployed search index on the stack's tables: `SEARCH_INDEX_URI` names it (the stack's
 * bucket and prefix); unset, search is off and nothing here is built.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDbStore } from "../../../history/dynamodb/index.js";
import { KnowledgeReader } from "../../../knowledge/read/index.js";
import { DynamoDbResultStore } from "../../../knowledge/store/index.js";
import { SearchIndexer } from "../indexer.js";
import { type ChannelIndexesOptions, LanceChannelIndexes } from "./channels.js";

interface DeployedSearchOptions extends ChannelIndexesOptions {
  /** Where the index is: `s3://bucket/prefix` or a directory; undefined or "": search is off. */
  uri: string | undefined;
  client: DynamoDBClient;
  resultsTable: string;
  messagesTable: string;
}

/** The index's writer on the tables, or undefined when search is off. */
export function deployedSearchIndexer(options: DeployedSearchOptions): SearchIndexer | undefined {
  const index = deployedSearchIndex(options);
  if (index === undefined) return undefined;
  const { client, resultsTable, messagesTable } = options;
  const reader = new KnowledgeReader({ client, tableName: resultsTable });
  return new SearchIndexer({
    index,
    results: new DynamoDbResultStore({ client, tableName: resultsTable }),
    messages: new DynamoDbStore({ client, tableName: messagesTable }),
    topics: (channel) => reader.topics(channel),
  });
}

/** The index itself (what the read API searches), or undefined when search is off. */
export function deployedSearchIndex(
  options: Pick<DeployedSearchOptions, "uri" | "storageOptions" | "now">,
): LanceChannelIndexes | undefined {
  const uri = options.uri?.trim();
  if (uri === undefined || uri === "") return undefined;
  return new LanceChannelIndexes(uri, options);
}
