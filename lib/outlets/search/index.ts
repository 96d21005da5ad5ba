/**
 * Search over messages, conversations, topics and questions. Documents come from what the
 * stores hold (`searchDocuments`; a segment's, `segmentDocuments`), queries are checked and
 * filtered here, and `SearchIndexer` keeps a deployed index following the stores; the index is
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
export { SearchIndexer, type SegmentIndex } from "./indexer.js";
export { MAX_HITS, MAX_OFFSET, QUESTION_STATUSES, type SearchQuery } from "./query.js";
export { segmentDocuments, storedChatMessages } from "./segment.js";
