/** The typed reader of the results table: a channel's merged topics and its questions. */
export {
  DEFAULT_QUESTION_LIMIT,
  KnowledgeReader,
  MAX_QUESTION_LIMIT,
  mergeSupports,
  type Topic,
  type TopicEmbeddings,
  type TopicEvidence,
} from "./reader.js";
