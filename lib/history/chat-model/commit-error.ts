import {
  type ConversationId,
  cloneMessage,
  describeError,
  HistoryError,
  type Message,
  type WriteOutcome,
} from "../index.js";
import type { ChatResponse } from "./chat.js";

/**
 * Model generation completed but persisting the exchange failed. It owns the exact batch that was
 * passed to the store and the facts of that write, so recovery never needs to call the model
 * again: when `outcome.uncertain` is false, `messages().slice(outcome.accepted)` is the suffix
 * that is safe to resubmit; when it is true, the caller must reconcile with the store first, and
 * accepted messages must never be appended again. `cause` is the write error, or an
 * AggregateError of it and the `InvalidWriteOutcomeError` when the store's facts contradicted
 * themselves. When streaming, this error follows the terminal delta.
 */
export class CommitError extends HistoryError {
  override readonly name: string = "CommitError";
  readonly conversationId: ConversationId;
  readonly outcome: WriteOutcome;
  /** The completed response, which the failed write does not take back. */
  readonly response: ChatResponse;
  private readonly batch: readonly Message[];

  constructor(attempt: {
    conversationId: ConversationId;
    messages: readonly Message[];
    outcome: WriteOutcome;
    response: ChatResponse;
    cause: unknown;
  }) {
    const { conversationId, cause } = attempt;
    super(
      "HISTORY_COMMIT_FAILED",
      `history: commit conversation ${JSON.stringify(conversationId)} after model completion: ${describeError(cause)}`,
      { cause },
    );
    this.conversationId = conversationId;
    this.outcome = { ...attempt.outcome };
    this.response = attempt.response;
    this.batch = attempt.messages.map(cloneMessage);
  }

  /** A fresh deep copy of the attempted batch: the fresh request messages, then the answer. */
  messages(): Message[] {
    return this.batch.map(cloneMessage);
  }
}
