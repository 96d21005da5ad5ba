import type { InlineMessage } from "../../segmentation/pipeline/contract/index.js";
import type { SegmentResult } from "./schema/items.js";
import type { SegmentEnvelope } from "./segment-envelope.js";

/** A stored message as it is now: deleted (no text, no author), or its current text. */
export interface MessageState {
  deleted: boolean;
  ts: number;
  /** The platform's time of the last edit applied, absent when never edited. */
  editedAt?: number;
  text?: string;
  author?: string;
  /** `bot` or `system` when not a person's message (system lines have no authors in evidence). */
  kind?: string;
}

/**
 * The message store's current state of messages, by id (the coordinator implements it over the
 * history store). An id it does not hold is absent from the map.
 */
export interface MessageStates {
  states(
    channel: string,
    ids: readonly string[],
    options?: { consistent?: boolean },
  ): Promise<Map<string, MessageState>>;
}

/** An edit or deletion ingestion applied to a stored message. */
export interface MessageChange {
  id: string;
  ts: number;
  kind: "edit" | "delete";
}

/**
 * A delivered segment as the message store holds it now: deleted messages dropped, edited ones
 * with their current text, its bounds and count those of what is left, and the edits it
 * accounts for. Undefined when every message was deleted: there is nothing to extract.
 */
function currentSegment(
  segment: SegmentEnvelope,
  messages: readonly InlineMessage[],
  states: ReadonlyMap<string, MessageState>,
):
  | { segment: SegmentEnvelope; messages: InlineMessage[]; edits: Record<string, number> }
  | undefined {
  const kept: InlineMessage[] = [];
  const edits: Record<string, number> = {};
  for (const message of messages) {
    const state = states.get(message.id);
    if (state?.deleted) continue;
    if (state?.editedAt !== undefined && state.text !== undefined) {
      kept.push({ ...message, text: state.text });
      edits[message.id] = state.editedAt;
    } else {
      kept.push(message);
    }
  }
  const first = kept[0];
  const last = kept.at(-1);
  if (first === undefined || last === undefined) return undefined;
  return {
    segment: {
      ...segment,
      count: kept.length,
      first: { id: first.id, ts: first.ts },
      last: { id: last.id, ts: last.ts },
    },
    messages: kept,
    edits,
  };
}

/**
 * What changed in the message store since `result` was written: its messages deleted since, and
 * those edited past the version it accounts for. `ids` are the messages to check (the result's,
 * or the segment's when the result could not list them).
 */
function changesSince(
  result: SegmentResult,
  ids: readonly string[],
  states: ReadonlyMap<string, MessageState>,
): MessageChange[] {
  const changes: MessageChange[] = [];
  for (const id of ids) {
    const state = states.get(id);
    if (state === undefined) continue;
    if (state.deleted) {
      changes.push({ id, ts: state.ts, kind: "delete" });
    } else if (state.editedAt !== undefined && state.editedAt > (result.edits?.[id] ?? -Infinity)) {
      changes.push({ id, ts: state.ts, kind: "edit" });
    }
  }
  return changes;
}

/** What the consumer needs to extract a segment as the message store holds it now. */
export interface CurrentMessages {
  states: MessageStates;
  redactor: {
    redactSegment(
      channel: string,
      segmentId: string,
      changes: readonly MessageChange[],
    ): Promise<unknown>;
  };
}

/**
 * Extracts a delivered segment as the message store holds it now, and closes the race with a
 * change that lands while it is extracted: the states are read before (deleted messages left
 * out, edits applied) and again, strongly consistent, once the result is stored; what changed
 * in between is redacted here. Ingestion applies a change to the store before it redacts, so
 * either its redaction finds this result or this second read finds the change. Resolves to the
 * changes redacted, or undefined when every message was deleted (nothing is extracted).
 */
export async function extractCurrent<T extends { result: SegmentResult }>(
  segment: SegmentEnvelope & { messageIds: readonly string[] },
  messages: readonly InlineMessage[],
  current: CurrentMessages,
  extract: (
    segment: SegmentEnvelope,
    messages: readonly InlineMessage[],
    edits: Record<string, number>,
  ) => Promise<T>,
): Promise<{ outcome: T; changes: number } | undefined> {
  const { channel, segmentId } = segment;
  const ids = messages.map((m) => m.id);
  const now = currentSegment(segment, messages, await current.states.states(channel, ids));
  if (now === undefined) return undefined;
  const outcome = await extract(now.segment, now.messages, now.edits);
  const after = await current.states.states(channel, ids, { consistent: true });
  const changes = changesSince(outcome.result, outcome.result.messageIds ?? ids, after);
  if (changes.length > 0) await current.redactor.redactSegment(channel, segmentId, changes);
  return { outcome, changes: changes.length };
}
