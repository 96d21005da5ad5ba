/**
 * The search index on LanceDB: a workspace's, built whole; a deployment's, a table per channel.
 * Its own entry point; LanceDB's native module is loaded at first use.
 */
export { LanceChannelIndexes } from "./channels.js";
export { LanceSearchIndex } from "./lancedb.js";
export { deployedSearchIndex, deployedSearchIndexer, searchEnvironment } from "./wiring.js";
