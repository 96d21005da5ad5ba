/**
 * Edits and deletions of stored chat messages: the `Editor` contract of both history stores.
 * A change is idempotent: a replay is `unchanged`, an edit older than the stored version is
 * `stale`, a deleted message stays deleted. A deletion redacts the item in place (it keeps its
 * key, position, id and timestamp; its parts, author and metadata go), and a deletion of an id not
 * stored leaves a tombstone, so that the message, arriving later, is not stored.
 */
import { type ConversationId, validateConversationId } from "../conversation-id.js";
import { describeError, HistoryError, InvalidMessageError } from "../errors.js";
import type { CallOptions } from "../store.js";

export type MessageChange =
  | { kind: "edit"; id: string; text: string; editedAt: number }
  | { kind: "delete"; id: string };

/**
 * What a change did: `applied` (now, or by an earlier attempt whose follow-up the caller never
 * confirmed with `settle`), `unchanged` (a replay, or an edit of a deleted message), `stale` (an
 * edit no newer than the stored version, with other text) or `missing` (no such message: an edit
 * does nothing, a deletion leaves a tombstone).
 */
export type ChangeStatus = "applied" | "unchanged" | "stale" | "missing";

export interface ChangeResult {
  status: ChangeStatus;
  /** The stored message's platform timestamp; absent when it is missing (or only a tombstone). */
  ts?: number;
  /** Whether the message was deleted before this change. */
  wasDeleted: boolean;
}

export interface ChangeOptions extends CallOptions {
  /**
   * Leave the change marked until `settle` is called for it: a replay of a marked change reports
   * `applied` again, so that a caller whose follow-up failed (redacting derived items) repeats it.
   */
  track?: boolean;
}

/** A change the store did not confirm; `uncertain` when it may have been applied anyway. */
export class ChangeError extends HistoryError {
  override readonly name: string = "ChangeError";
  constructor(
    readonly uncertain: boolean,
    cause: unknown,
  ) {
    super(
      "HISTORY_CHANGE_FAILED",
      `history: change failed${uncertain ? " (it may have been applied)" : ""}: ${describeError(cause)}`,
      { cause },
    );
  }
}

/**
 * Applies edits and deletions to stored messages (see the module comment); rejects with a
 * {@link ChangeError} when the store did not answer. Replaying a change is always safe.
 */
export interface Editor {
  change(
    conversationId: ConversationId,
    change: MessageChange,
    options?: ChangeOptions,
  ): Promise<ChangeResult>;
  /** Clears the mark a tracked change left, unless a later change replaced it. */
  settle(
    conversationId: ConversationId,
    change: MessageChange,
    options?: CallOptions,
  ): Promise<void>;
}

/** The mark a tracked change leaves on its message: which change still awaits its follow-up. */
export function changeMark(change: MessageChange): string {
  return change.kind === "delete" ? "d" : `e${change.editedAt}`;
}

/**
 * What every `Editor.change` does before any I/O: honour the signal, validate the conversation
 * id and the change.
 */
export function prepareChange(
  conversationId: ConversationId,
  change: MessageChange,
  options?: CallOptions,
): void {
  options?.signal?.throwIfAborted();
  validateConversationId(conversationId);
  validateChange(change);
}

/** Throws an {@link InvalidMessageError} naming the field of a change at fault. */
function validateChange(change: MessageChange): void {
  if (typeof change.id !== "string" || change.id === "") {
    throw new InvalidMessageError("id", "expected a non-empty string");
  }
  if (change.kind === "delete") return;
  if (change.kind !== "edit") throw new InvalidMessageError("op", "expected edit or delete");
  if (typeof change.text !== "string") throw new InvalidMessageError("text", "expected a string");
  if (!Number.isFinite(change.editedAt)) {
    throw new InvalidMessageError("editedAt", "expected finite epoch milliseconds");
  }
}
