/**
 * Questions linked by the nearness of their embeddings (the topics' embeddings matcher), each
 * pair kept only when its words do not set the two apart: a model finds "how do I install X"
 * and "how do I uninstall X" near, and they are two questions.
 */
import { embeddingMatcher, type TopicMatcher } from "../topics/index.js";
import { sameQuestion } from "./key.js";

/** Pairs of questions whose vectors are at least `similarity` alike and whose words agree. */
export function meaningMatcher(
  vectors: ReadonlyMap<string, readonly number[]>,
  similarity?: number,
): TopicMatcher {
  const near = embeddingMatcher(vectors, similarity);
  return function* (questions) {
    // Threshold 0: no share of words is asked, only that none opposes (actions, versions).
    for (const [a, b] of near(questions)) if (sameQuestion(a, b, 0)) yield [a, b];
  };
}
