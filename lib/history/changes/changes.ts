/**
 * Edits and deletions of stored chat messages: the `Editor` contract of both history stores.
 * A change is idempotent: a replay is `unchanged`, an edit older than the stored version is
 * `stale`, a deleted message stays deleted. A deletion redacts the item in place (it keeps its
 * key, position, id and timestamp; its parts, author and metadata go).
 *
 * A change of an id not stored is held for a bounded time (the store's `changeHoldHours`),
 * because platforms deliver events out of order (Slack's `message_changed` may come before its
 * `message`, and it retries for up to about an hour): the message arriving within the hold is
 * refused after a held deletion, and stored with a held edit applied. After the hold the held
 * change no longer counts, so that a forged or mistaken deletion cannot refuse a message for
 * good. Of several held changes of one id, a deletion wins over any edit and the newest edit over
 * older ones. A held change has no arrival position, so no reader ever sees it as a message, and
 * a stored message is never replaced by one.
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
 * edit no newer than the stored version, with other text) or `missing` (no such message: the
 * change is held, to apply to the message if it arrives within the hold).
 */
export type ChangeStatus = "applied" | "unchanged" | "stale" | "missing";

export interface ChangeResult {
  status: ChangeStatus;
  /** The stored message's platform timestamp; absent when it is missing (or only held changes). */
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

/** How long a change of an id not stored is held by default (`changeHoldHours`). */
export const DEFAULT_CHANGE_HOLD_HOURS = 24;
/** The longest hold a store takes: 30 days, so that a held change stays a bounded wait. */
export const MAX_CHANGE_HOLD_HOURS = 720;
const HOUR_MS = 3_600_000;

/**
 * A store's `changeHoldHours` in milliseconds: the default when unset, else a whole number of
 * hours from 1 to {@link MAX_CHANGE_HOLD_HOURS}; throws a RangeError naming the option.
 */
export function changeHoldMs(hours: number | undefined): number {
  const value = hours ?? DEFAULT_CHANGE_HOLD_HOURS;
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_CHANGE_HOLD_HOURS) {
    throw new RangeError(
      `history: changeHoldHours must be a whole number of hours from 1 to ${MAX_CHANGE_HOLD_HOURS} (got ${value})`,
    );
  }
  return value * HOUR_MS;
}

/** Epoch seconds at `now` (ms), as DynamoDB's TTL counts: what a hold's end is compared with. */
export const epochSeconds = (now: number): number => Math.floor(now / 1000);

/** When a change held at `now` stops counting, in epoch seconds (the TTL attribute's unit). */
export const holdEnd = (now: number, holdMs: number): number => Math.ceil((now + holdMs) / 1000);

/** Whether a hold ending at `end` is over at `now`: DynamoDB's condition `expiresAt < :now`. */
export const holdOver = (end: number, now: number): boolean => end < epochSeconds(now);

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
