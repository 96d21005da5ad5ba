/**
 * Ingestion's edits and deletions: each applied through the store's `Editor` in input order, and
 * the applied ones of a channel handed to the caller's listener (which redacts what was derived
 * from them after delivery) before the store forgets them. A change whose listener failed stays
 * marked in the store, so re-sending it reports it applied and calls the listener again.
 */
import {
  ChangeError,
  type ChangeStatus,
  type Editor,
  type MessageChange,
} from "../../history/changes/index.js";
import { findCause } from "../../history/index.js";

/** What an edit or deletion did, by its index in the input. */
export interface ChangeReport {
  index: number;
  op: "edit" | "delete";
  /**
   * `applied`; `unchanged` (a replay, or an edit of a deleted message); `stale` (an edit no newer
   * than the stored version, kept); `missing` (no such message: an edit is dropped, re-send it
   * once the message is stored; a deletion is recorded, so the message is never stored).
   */
  status: ChangeStatus;
}

/** An applied change as the listener learns it: which message, when it was sent, what happened. */
export interface AppliedChange {
  id: string;
  /** The message's platform timestamp (epoch ms); absent for one stored without. */
  ts?: number;
  kind: "edit" | "delete";
}

/**
 * Called once per channel and ingest call with the changes applied there, in input order (never
 * replays, stale edits or missing messages). Must be idempotent: a failure fails those changes
 * (uncertain), and re-sending them calls it again with them.
 */
export type ChangeListener = (channel: string, changes: AppliedChange[]) => Promise<void>;

/** One change of a channel's input and where it stands. */
export interface PendingChange {
  index: number;
  change: MessageChange;
}

export type ChangeAttempt =
  | { ok: true; report: ChangeReport; applied?: AppliedChange }
  | { ok: false; error: string; uncertain: boolean };

/** Applies one change, tracked when a listener will be told of it. */
export async function applyChange(
  editor: Editor,
  channel: string,
  { index, change }: PendingChange,
  options: { signal?: AbortSignal; tracked: boolean },
): Promise<ChangeAttempt> {
  try {
    const result = await editor.change(channel, change, {
      signal: options.signal,
      track: options.tracked,
    });
    const report: ChangeReport = { index, op: change.kind, status: result.status };
    if (result.status !== "applied") return { ok: true, report };
    const applied: AppliedChange = { id: change.id, kind: change.kind };
    if (result.ts !== undefined) applied.ts = result.ts;
    return { ok: true, report, applied };
  } catch (error) {
    const uncertain = findCause(error, ChangeError)?.uncertain ?? true;
    return { ok: false, error: (error as Error).message, uncertain };
  }
}

/**
 * Tells the listener of a channel's applied changes, then clears their marks. Resolves with the
 * error that stopped it (the changes are then failed and uncertain), or undefined.
 */
export async function notifyApplied(
  editor: Editor,
  channel: string,
  applied: { change: MessageChange; applied: AppliedChange }[],
  listener: ChangeListener,
  signal?: AbortSignal,
): Promise<string | undefined> {
  try {
    await listener(
      channel,
      applied.map((a) => a.applied),
    );
  } catch (error) {
    return `applied, but the change listener failed (re-send to retry it): ${describe(error)}`;
  }
  try {
    for (const { change } of applied) await editor.settle(channel, change, { signal });
  } catch (error) {
    return `applied and handled, but not confirmed (re-send to confirm): ${describe(error)}`;
  }
  return undefined;
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));
