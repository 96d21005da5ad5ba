/**
 * Search over messages, conversations, topics and questions. Documents come from what the
 * stores hold (`searchDocuments`); the index is an embedded LanceDB full-text table
 * (`LanceSearchIndex`), queried with filters by channel, kind, question status, time and author.
 */
export {
  SEARCH_KINDS,
  type SearchDocument,
  type SearchKind,
  searchDocuments,
} from "./documents.js";
export { SearchError } from "./errors.js";
export { LanceSearchIndex, type SearchHit } from "./lancedb.js";
export { MAX_HITS, QUESTION_STATUSES, type SearchQuery } from "./query.js";
