/**
 * The reply linker: which earlier message each message of an unthreaded channel answers.
 * Learned from the Ubuntu IRC disentanglement corpus; decided once per message from a bounded window.
 */

export {
  type AdvisedMessage,
  type LinkAdvisor,
  type LinkAnswer,
  type LinkQuestion,
  questionOf,
  takenAnswers,
} from "./advisor.js";
export {
  type ConversationMerge,
  linkAll,
  mergesOf,
  settledConversations,
  settleMerges,
} from "./all.js";
export { PairContext } from "./context.js";
export type {
  LinkChoice,
  LinkDecision,
  LinkInput,
  /** @public Part of this entry point's API for callers outside the repository. */
  ReplyLinkerOptions,
} from "./decision.js";
export {
  CONTENT_SIZE,
  CONVERSATION_FROM,
  considered,
  contentFeatures,
  PAIR_SIZE,
  pairFeatures,
  QUERY_SIZE,
  queryFeatures,
} from "./features.js";
export { defaultLinkerModel, ReplyLinker } from "./linker.js";
export { LinkerModel, type LinkerModelFile } from "./model.js";
export {
  /** @public Stored by callers between runs. */
  type LinkerState,
  /** @public */
  MAX_LINKER_STATE_BYTES,
} from "./state.js";
export { contentWords } from "./text.js";
export {
  /** @public */
  type LinkerMessage,
  Window,
} from "./window.js";
