import { compareIds } from "../messages/index.js";
import { type ConversationId, validateConversationId } from "./conversation-id.js";
import { cloneMessage, type Message } from "./message.js";
import { NOTHING_WRITTEN, type WriteOutcome } from "./outcome.js";
import { type CallOptions, type Lister, prepareWrite, type Store } from "./store.js";

/**
 * The reference store: conversations in memory, in arrival order, one message per platform id.
 * Ready to use as constructed; every read and write copies, so callers never share its state.
 */
export class MemoryStore implements Store, Lister {
  private readonly conversationsById = new Map<
    ConversationId,
    { messages: Message[]; ids: Set<string> }
  >();

  async read(conversationId: ConversationId, options?: CallOptions): Promise<Message[]> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    return (this.conversationsById.get(conversationId)?.messages ?? []).map(cloneMessage);
  }

  /** Appends in argument order; a message whose platform id is already stored is skipped. */
  async write(
    conversationId: ConversationId,
    messages: readonly Message[],
    options?: CallOptions,
  ): Promise<WriteOutcome> {
    const batch = prepareWrite(conversationId, messages, options);
    if (batch.length === 0) return NOTHING_WRITTEN;
    let conversation = this.conversationsById.get(conversationId);
    if (!conversation) {
      conversation = { messages: [], ids: new Set() };
      this.conversationsById.set(conversationId, conversation);
    }
    for (const message of batch) {
      if (message.id !== undefined) {
        if (conversation.ids.has(message.id)) continue;
        conversation.ids.add(message.id);
      }
      conversation.messages.push(message);
    }
    return { accepted: batch.length, uncertain: false };
  }

  async clear(conversationId: ConversationId, options?: CallOptions): Promise<void> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    this.conversationsById.delete(conversationId);
  }

  async conversations(options?: CallOptions): Promise<ConversationId[]> {
    options?.signal?.throwIfAborted();
    return [...this.conversationsById.keys()].sort(compareIds);
  }
}
