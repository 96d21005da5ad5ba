/**
 * Topics across segments: the token key of a topic (case, punctuation, separators, known
 * compounds, plurals and inflections, stop words, word order) and the merge of a channel's
 * topics into canonical topics with aliases, behind a matcher seam an embeddings matcher can
 * join. Pure, no dependencies.
 */

export {
  DEFAULT_MAX_EMBEDDED_TOPICS,
  DEFAULT_SIMILARITY,
  type Embedder,
  EmbeddingError,
  embeddingMatcher,
  embedTopics,
} from "./embeddings.js";
export {
  compoundStems,
  DIRECTIONAL_WORDS,
  sameTopic,
  stem,
  TOPIC_STOP_WORDS,
  topicKey,
  topicVocabulary,
  topicWords,
} from "./key.js";
export {
  type CanonicalTopic,
  mergeTopics,
  type TopicAlias,
  type TopicMatcher,
  tokenMatcher,
} from "./merge.js";
