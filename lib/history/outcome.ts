import { describeError, HistoryError, InvalidWriteOutcomeError } from "./errors.js";
import type { Message } from "./message.js";

/**
 * The acknowledged facts of one write attempt. `accepted` counts the confirmed prefix in argument
 * order; `uncertain` means messages after it may have been stored, so the caller must reconcile
 * before retrying; otherwise every remaining message is confirmed unwritten. It never implies
 * idempotency or rollback. All messages may be accepted even when ancillary work failed.
 *
 * `existing` (convoseg's addition, absent when empty) lists the accepted messages whose platform
 * id was already stored: the store kept what it had and wrote nothing for them. `stored` is that
 * stored message, so a caller can tell a repeat from an edit.
 */
export interface WriteOutcome {
  readonly accepted: number;
  readonly uncertain: boolean;
  readonly existing?: readonly ExistingMessage[];
}

/** An accepted message whose platform id the store already held, and what it holds. */
export interface ExistingMessage {
  /** Index in the written batch. */
  readonly index: number;
  readonly stored: Message;
}

/** Nothing was written. */
export const NOTHING_WRITTEN: WriteOutcome = Object.freeze({ accepted: 0, uncertain: false });

/**
 * Checks that `outcome` can describe a write of `count` messages that ended with `error`
 * (`undefined` for success). Returns an {@link InvalidWriteOutcomeError} for the first rule broken,
 * or `undefined`: the counts are in range; no remaining message can be uncertain when all were
 * accepted; success must acknowledge every message.
 */
export function validateWriteOutcome(
  outcome: WriteOutcome,
  count: number,
  error: unknown,
): InvalidWriteOutcomeError | undefined {
  const { accepted, uncertain } = outcome;
  if (!(count >= 0 && accepted >= 0 && accepted <= count) || !Number.isInteger(accepted)) {
    return new InvalidWriteOutcomeError(`accepted ${accepted} of ${count} messages`);
  }
  if (uncertain && accepted === count) {
    return new InvalidWriteOutcomeError("no remaining message can be uncertain");
  }
  if (error === undefined && (uncertain || accepted !== count)) {
    return new InvalidWriteOutcomeError(`success must acknowledge all ${count} messages`);
  }
  return undefined;
}

/**
 * How a write fails: the facts of the attempt in `outcome` and the reason in `cause`. A store's
 * `write` rejects only with this, so that callers always learn what was stored.
 */
export class WriteError extends HistoryError {
  override readonly name: string = "WriteError";
  constructor(
    readonly outcome: WriteOutcome,
    cause: unknown,
  ) {
    const facts = `${outcome.accepted} accepted${outcome.uncertain ? ", the rest uncertain" : ""}`;
    super("HISTORY_WRITE_FAILED", `history: write failed (${facts}): ${describeError(cause)}`, {
      cause,
    });
  }
}
