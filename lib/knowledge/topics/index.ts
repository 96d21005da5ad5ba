/**
 * Topics across segments. The token key of a topic (case, punctuation, separators, known
 * compounds, plurals and inflections, stop words, word order) and the merge of a channel's topics
 * into canonical topics with aliases, behind a matcher seam an embeddings matcher can join. Pure,
 * no dependencies.
 */

export {
  DEFAULT_SIMILARITY,
  DEFAULT_TITAN_EMBEDDINGS_MODEL,
  type Embedder,
  EmbeddingError,
  embeddingMatcher,
  embedTopics,
} from "./embeddings.js";
export { sameTopic, stem, topicKey, topicWords } from "./key.js";
export { mergeTopics, type TopicAlias, type TopicMatcher, tokenMatcher } from "./merge.js";
