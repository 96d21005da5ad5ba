/**
 * Recurring questions grouped into FAQ entries, with their clearest wording and best answer.
 * Questions are linked by their words (stems, stop words, synonyms, opposites kept apart) and,
 * optionally, by the topics' embeddings matcher; grouping is pure and order-independent.
 */

export {
  type FaqEntry,
  type FaqQuestion,
  groupQuestions,
  questionMatcher,
} from "./faq.js";
export { DEFAULT_QUESTION_SIMILARITY, questionStems, sameQuestion } from "./key.js";
export { meaningMatcher } from "./meaning.js";
