import { type ConversationId, validateConversationId } from "./conversation-id.js";
import { type Message, snapshotBatch } from "./message.js";
import { NOTHING_WRITTEN, WriteError, type WriteOutcome } from "./outcome.js";

/** Per-call options: an aborted signal rejects before any I/O. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** Returns the messages to replay for one conversation. */
export interface Reader {
  /**
   * A detached snapshot in stored order; an empty array for an unknown conversation. Deleted
   * messages (`Editor`) are left out: nothing of them is left to replay. The caller owns the
   * result: changing it changes nothing stored.
   */
  read(conversationId: ConversationId, options?: CallOptions): Promise<Message[]>;
}

/** Appends messages to one conversation. */
export interface Writer {
  /**
   * Validates and snapshots the whole batch before appending it in argument order. Resolves with
   * the complete acceptance; rejects only with a `WriteError` whose `outcome` accounts for every
   * acknowledged or uncertain effect (the zero outcome for validation failures). Later changes
   * by the caller do not alter what was stored. Concurrent writes have no common order.
   */
  write(
    conversationId: ConversationId,
    messages: readonly Message[],
    options?: CallOptions,
  ): Promise<WriteOutcome>;
}

/** Removes a whole conversation; idempotent when it is absent. */
export interface Clearer {
  clear(conversationId: ConversationId, options?: CallOptions): Promise<void>;
}

/** Enumerates conversations. */
export interface Lister {
  /** Unique ids in lexical (code point) order; an empty array when there are none. */
  conversations(options?: CallOptions): Promise<ConversationId[]>;
}

/** What components that replay and append history need, without retention or deletion. */
export interface ReadWriter extends Reader, Writer {}

/** The ordinary per-conversation contract. */
export interface Store extends ReadWriter, Clearer {}

/**
 * What every `Writer.write` does before any I/O: honour the signal, validate the conversation id
 * and snapshot the validated batch. Any failure is a `WriteError` with the zero outcome.
 */
export function prepareWrite(
  conversationId: ConversationId,
  messages: readonly Message[],
  options?: CallOptions,
): Message[] {
  try {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    return snapshotBatch(messages);
  } catch (error) {
    throw new WriteError(NOTHING_WRITTEN, error);
  }
}
