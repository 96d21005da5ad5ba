import { conversationIdProblem } from "../base/identity/index.js";
import { InvalidConversationIdError } from "./errors.js";

/**
 * Identifies one history partition: for chat ingestion, a channel. Any string that passes
 * {@link validateConversationId}; the store itself sets no length limit (DynamoDB's key limit
 * is checked by the DynamoDB store).
 */
export type ConversationId = string;

/**
 * Checks the rules in order and throws an {@link InvalidConversationIdError} for the first one
 * broken: empty; not well-formed UTF-16 (a lone surrogate: the port of "invalid UTF-8");
 * leading or trailing whitespace; a control character anywhere.
 */
export function validateConversationId(value: unknown): asserts value is ConversationId {
  const problem = conversationIdProblem(value);
  if (problem !== undefined) throw new InvalidConversationIdError(problem);
}

/** `value` as a conversation id, after validation. */
export function newConversationId(value: string): ConversationId {
  validateConversationId(value);
  return value;
}
