/** The typed reader of the results table: a channel's merged topics and its questions. */
export {
  KnowledgeReader,
  MAX_QUESTION_LIMIT,
  mergeSupports,
  type Topic,
  type TopicEmbeddings,
} from "./reader.js";
