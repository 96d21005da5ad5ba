/**
 * The search index on LanceDB: a workspace's, built whole, and a deployment's, one table per
 * channel written segment by segment. Its own entry point; LanceDB's native module is loaded at
 * first use.
 */
export { type ChannelIndexesOptions, LanceChannelIndexes } from "./channels.js";
export { LanceSearchIndex } from "./lancedb.js";
export {
  type DeployedSearchOptions,
  deployedSearchIndex,
  deployedSearchIndexer,
} from "./wiring.js";
