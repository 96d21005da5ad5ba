/**
 * Search over messages, conversations, topics and questions. Documents come from what the
 * stores hold (`searchDocuments`), queries are checked and filtered here; the index is
 * `convoseg/search/lancedb`.
 */
export {
  MAX_SEGMENT_TEXT,
  SEARCH_KINDS,
  type SearchDocument,
  type SearchHit,
  type SearchKind,
  type SearchResultSource,
  searchDocuments,
} from "./documents.js";
export { SearchError } from "./errors.js";
export { MAX_HITS, MAX_OFFSET, QUESTION_STATUSES, type SearchQuery } from "./query.js";
