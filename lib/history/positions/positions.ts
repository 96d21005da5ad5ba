import type { ConversationId } from "../conversation-id.js";
import { describeError, HistoryError } from "../errors.js";
import { Sequence } from "../sequence.js";

/**
 * Arrival positions reserved for one write: `count` consecutive positions from `first`. A store
 * writes each message of the reservation at its position, then releases the lease once every
 * put it started under it has finished (whatever their fate), which tells readers that nothing
 * more will be written at these positions.
 */
export interface PositionLease {
  readonly first: bigint;
  /**
   * A `performance.now()` reading after which the store starts no new put under this lease; it
   * reserves again for what is left. Absent when the lease does not expire.
   */
  readonly startBy?: number;
  release(): Promise<void>;
}

/**
 * Hands out arrival positions. A store that shares a conversation with concurrent readers (the
 * pipeline's tick) needs them from an allocator the readers can see (`ChannelPositions`), so
 * that a reader never passes a position a writer still holds; the default hands them out in
 * process, from a {@link Sequence}.
 */
export interface PositionAllocator {
  reserve(
    conversationId: ConversationId,
    count: number,
    signal?: AbortSignal,
  ): Promise<PositionLease>;
}

const released = Promise.resolve();

/** Positions from one process's {@link Sequence}: strictly increasing within the process. */
export class SequenceAllocator implements PositionAllocator {
  constructor(private readonly sequence: Sequence = new Sequence()) {}

  async reserve(_conversationId: ConversationId, count: number): Promise<PositionLease> {
    return { first: this.sequence.reserve(count), release: () => released };
  }
}

/**
 * Every message was written, but the position lease could not be released: a reader that
 * waits on the lease (the pipeline's tick) does not know yet that they arrived. Writing the
 * same messages again (a no-op for stored ids) releases a new lease.
 */
export class LeaseReleaseError extends HistoryError {
  override readonly name: string = "LeaseReleaseError";
  constructor(cause: unknown) {
    super(
      "HISTORY_LEASE_RELEASE_FAILED",
      `history: messages stored, but their position lease was not released: ${describeError(cause)}`,
      { cause },
    );
  }
}
