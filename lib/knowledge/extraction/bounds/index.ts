/**
 * What a model's reply may hold. The caps on candidates, questions, tags and their lengths, and
 * the functions that bound a reply to them and count what was trimmed.
 */
export {
  addTrimmed,
  boundCandidate,
  boundQuestion,
  countTrimmed,
  /** @public Part of this entry point's API for callers outside the repository. */
  DEFAULT_MAX_CANDIDATES,
  /** @public */
  DEFAULT_MAX_TURN_CHARS,
  MAX_ANSWER_CHARS,
  MAX_QUESTION_CHARS,
  MAX_QUESTIONS,
  MAX_REASON_CHARS,
  MAX_TAG_CHARS,
  MAX_TAGS,
  MAX_TOPIC_CHARS,
} from "./bounds.js";
