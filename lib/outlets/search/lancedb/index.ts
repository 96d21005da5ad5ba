/**
 * The search index on LanceDB, embedded: search documents under a full-text index, built whole
 * and queried with filters. Its own entry point, so that the pure search code loads
 * without LanceDB's native module.
 */
export { LanceSearchIndex } from "./lancedb.js";
