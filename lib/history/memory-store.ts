import { compareIds } from "../identity/index.js";
import { type ConversationId, validateConversationId } from "./conversation-id.js";
import { cloneMessage, type Message } from "./message.js";
import { type ExistingMessage, NOTHING_WRITTEN, WriteError, type WriteOutcome } from "./outcome.js";
import { LeaseReleaseError, type PositionAllocator, SequenceAllocator } from "./positions.js";
import { type CallOptions, type Lister, prepareWrite, type Store } from "./store.js";

export interface MemoryStoreOptions {
  /** Where arrival positions come from (default: an in-process sequence). */
  positions?: PositionAllocator;
}

interface Entry {
  position: bigint;
  message: Message;
}

/**
 * The reference store: conversations in memory, in arrival order, one message per platform id.
 * Ready to use as constructed; every read and write copies, so callers never share its state.
 * Like the DynamoDB store it gives every message an arrival position from its allocator and
 * answers the reads the pipeline makes (`arrivalsAfter`, `getMessages`), so whole pipelines can
 * run in memory.
 */
export class MemoryStore implements Store, Lister {
  private readonly positions: PositionAllocator;
  private readonly conversationsById = new Map<
    ConversationId,
    { entries: Entry[]; byId: Map<string, Entry> }
  >();

  constructor(options: MemoryStoreOptions = {}) {
    this.positions = options.positions ?? new SequenceAllocator();
  }

  async read(conversationId: ConversationId, options?: CallOptions): Promise<Message[]> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    return this.entries(conversationId).map((entry) => cloneMessage(entry.message));
  }

  /**
   * Appends in argument order at positions from the allocator; a message whose platform id is
   * already stored is skipped and reported in `existing`.
   */
  async write(
    conversationId: ConversationId,
    messages: readonly Message[],
    options?: CallOptions,
  ): Promise<WriteOutcome> {
    const batch = prepareWrite(conversationId, messages, options);
    if (batch.length === 0) return NOTHING_WRITTEN;
    let conversation = this.conversationsById.get(conversationId);
    if (!conversation) {
      conversation = { entries: [], byId: new Map() };
      this.conversationsById.set(conversationId, conversation);
    }
    const existing: ExistingMessage[] = [];
    const fresh: Message[] = [];
    const seen = new Map<string, Message>();
    batch.forEach((message, index) => {
      const stored =
        message.id === undefined
          ? undefined
          : (conversation.byId.get(message.id)?.message ?? seen.get(message.id));
      if (stored !== undefined) {
        existing.push({ index, stored: cloneMessage(stored) });
        return;
      }
      if (message.id !== undefined) seen.set(message.id, message);
      fresh.push(message);
    });
    if (fresh.length > 0) {
      const lease = await this.positions.reserve(conversationId, fresh.length, options?.signal);
      fresh.forEach((message, i) => {
        const entry = { position: lease.first + BigInt(i), message };
        insertByPosition(conversation.entries, entry);
        if (message.id !== undefined) conversation.byId.set(message.id, entry);
      });
      try {
        await lease.release();
      } catch (error) {
        throw new WriteError(outcomeOf(batch.length, existing), new LeaseReleaseError(error));
      }
    }
    return outcomeOf(batch.length, existing);
  }

  /** What arrived after position `after` (and at or before `upTo`), in arrival order. */
  async *arrivalsAfter(
    conversationId: ConversationId,
    after: bigint | undefined,
    options?: CallOptions & { upTo?: bigint },
  ): AsyncIterable<{ position: bigint; id?: string; ts?: number }> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    for (const { position, message } of this.entries(conversationId)) {
      if (after !== undefined && position <= after) continue;
      if (options?.upTo !== undefined && position > options.upTo) break;
      yield { position, id: message.id, ts: message.ts };
    }
  }

  /** The messages with the given platform ids, in the order of `ids`; missing ones left out. */
  async getMessages(
    conversationId: ConversationId,
    ids: readonly string[],
    options?: CallOptions,
  ): Promise<Message[]> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    const byId = this.conversationsById.get(conversationId)?.byId;
    return ids.flatMap((id) => {
      const entry = byId?.get(id);
      return entry ? [cloneMessage(entry.message)] : [];
    });
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

  private entries(conversationId: ConversationId): Entry[] {
    return this.conversationsById.get(conversationId)?.entries ?? [];
  }
}

function outcomeOf(accepted: number, existing: ExistingMessage[]): WriteOutcome {
  return existing.length > 0
    ? { accepted, uncertain: false, existing }
    : { accepted, uncertain: false };
}

/** Keeps entries in position order; positions of concurrent writers may commit out of order. */
function insertByPosition(entries: Entry[], entry: Entry): void {
  let at = entries.length;
  while (at > 0 && entries[at - 1].position > entry.position) at--;
  entries.splice(at, 0, entry);
}
