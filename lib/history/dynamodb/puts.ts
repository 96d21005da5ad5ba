/**
 * One message's conditional put and what the puts of a write add up to: the outcome the
 * `Writer` contract reports.
 */
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { backoff } from "../../base/backoff/index.js";
import { isAmbiguous, isConditionFailure, isRetryable } from "../../base/dynamodb/index.js";
import { epochSeconds } from "../changes/changes.js";
import type { Message, Part } from "../message.js";
import type { ExistingMessage, WriteOutcome } from "../outcome.js";
import { type TableAccess, withRetries } from "./access.js";
import {
  DELETED,
  EDITED_AT,
  itemMessage,
  MESSAGES_TTL_ATTRIBUTE,
  type MessageItem,
  PARTITION_KEY,
  POSITION,
  SORT_KEY,
} from "./schema.js";

export type PutResult =
  | { status: "stored" }
  | { status: "existing"; stored: Message }
  | { status: "failed"; error: unknown; ambiguous: boolean };

/** A held edit (`./changes.ts`) the message is put with. */
type HeldEdit = { parts: Part[]; editedAt: number };

/**
 * One conditional put, retried while the failure is transient: it takes the key when no item has
 * it or only a held change whose hold is over at `now` (`./changes.ts`; checked here, not left to
 * TTL, which removes items some time after), never from a stored message (it has a position).
 * A held deletion in force refuses the message (reported `existing`, deleted); a held edit in
 * force is applied to it (a written message never carries `editedAt`, so the edit is newer), and
 * the put replaces that held edit only while it is the one read. Once an attempt was ambiguous
 * the put stays uncertain whatever later attempts say, unless one proves it stored.
 */
export async function putMessage(
  access: TableAccess,
  item: MessageItem,
  now: number,
  signal?: AbortSignal,
): Promise<PutResult> {
  let ambiguous = false;
  let put: MessageItem & { editedAt?: number } = item;
  for (let attempt = 1; ; ) {
    try {
      await access.documents.send(
        new PutCommand({
          TableName: access.tableName,
          Item: put,
          ...putCondition(now, put.editedAt),
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
        { abortSignal: signal },
      );
      return { status: "stored" };
    } catch (error) {
      if (isConditionFailure(error)) {
        const found = await conditionFailed(access, put, error, ambiguous, signal);
        if (!("editedAt" in found)) return found;
        // A held edit in force (a newer one, if this put carried one): put the message with it.
        put = { ...item, parts: found.parts, editedAt: found.editedAt };
        continue;
      }
      ambiguous ||= isAmbiguous(error);
      if (!isRetryable(error) || attempt >= access.maxAttempts || signal?.aborted) {
        return { status: "failed", error, ambiguous };
      }
      await backoff(access.pacing, attempt);
      attempt++;
    }
  }
}

/** The condition of a message's put (see {@link putMessage}); `held`: the held edit it carries. */
function putCondition(now: number, held: number | undefined) {
  const names: Record<string, string> = {
    "#k": SORT_KEY,
    "#pos": POSITION,
    "#exp": MESSAGES_TTL_ATTRIBUTE,
  };
  const values: Record<string, unknown> = { ":now": epochSeconds(now) };
  let condition = "attribute_not_exists(#k) OR (attribute_not_exists(#pos) AND #exp < :now)";
  if (held !== undefined) {
    Object.assign(names, { "#d": DELETED, "#e": EDITED_AT });
    values[":held"] = held;
    condition += " OR (attribute_not_exists(#pos) AND attribute_not_exists(#d) AND #e = :held)";
  }
  return {
    ConditionExpression: condition,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/**
 * What a failed condition means: the id is stored, by an earlier attempt of this very put when
 * an attempt was ambiguous and the stored item has this put's position, else before this write;
 * or a held change is in force: a deletion (the message is refused as deleted) or an edit
 * (returned, to be applied). The item comes with the error (ALL_OLD), else is read; if it cannot
 * be read, the put counts as failed, and uncertain.
 */
async function conditionFailed(
  access: TableAccess,
  item: MessageItem,
  error: unknown,
  ambiguous: boolean,
  signal?: AbortSignal,
): Promise<PutResult | HeldEdit> {
  try {
    const old = await storedItem(access, item, error, signal);
    if (ambiguous && old[POSITION] === item.position) return { status: "stored" };
    if (old[POSITION] === undefined && old[DELETED] !== true) {
      return { parts: old.parts as Part[], editedAt: old[EDITED_AT] as number };
    }
    return { status: "existing", stored: itemMessage(old) };
  } catch (readError) {
    return { status: "failed", error: readError, ambiguous: true };
  }
}

/** The item a failed condition found: from the error (ALL_OLD), else read consistently. */
async function storedItem(
  access: TableAccess,
  item: MessageItem,
  error: unknown,
  signal?: AbortSignal,
): Promise<Record<string, unknown>> {
  const old = (error as { Item?: Parameters<typeof unmarshall>[0] }).Item;
  if (old !== undefined) return unmarshall(old);
  const { Item: found } = await withRetries(access, () =>
    access.documents.send(
      new GetCommand({
        TableName: access.tableName,
        Key: { [PARTITION_KEY]: item.conversation, [SORT_KEY]: item.key },
        ConsistentRead: true,
      }),
      { abortSignal: signal },
    ),
  );
  if (found === undefined)
    throw new Error(`history/dynamodb: ${item.key} vanished after a failed condition`);
  return found;
}

/**
 * For each message of the batch, the index of the first message with its platform id (itself
 * when it has none or is the first): a repeated id within a batch is the same message.
 */
export function firstOccurrences(batch: Message[]): number[] {
  const first = new Map<string, number>();
  return batch.map((message, index) => {
    if (message.id === undefined) return index;
    const earlier = first.get(message.id);
    if (earlier !== undefined) return earlier;
    first.set(message.id, index);
    return index;
  });
}

/**
 * The outcome of a write from the results of its distinct puts: the accepted prefix (each message
 * stored now or before), whether anything after it may be stored (a put after it that stored or
 * failed ambiguously), and the accepted messages that were already stored (repeats within the
 * batch report the first occurrence, or what the store held for it).
 */
export function writeOutcome(
  batch: Message[],
  firstOf: number[],
  results: Map<number, PutResult>,
): WriteOutcome {
  const ok = (index: number) => {
    const status = results.get(firstOf[index])?.status;
    return status === "stored" || status === "existing";
  };
  let accepted = 0;
  while (accepted < batch.length && ok(accepted)) accepted++;
  let uncertain = false;
  for (let index = accepted; index < batch.length && !uncertain; index++) {
    const result = results.get(firstOf[index]);
    uncertain = result?.status === "stored" || (result?.status === "failed" && result.ambiguous);
  }
  const existing: ExistingMessage[] = [];
  for (let index = 0; index < accepted; index++) {
    const result = results.get(firstOf[index]);
    if (result?.status === "existing") existing.push({ index, stored: result.stored });
    else if (firstOf[index] !== index) existing.push({ index, stored: batch[firstOf[index]] });
  }
  return existing.length > 0 ? { accepted, uncertain, existing } : { accepted, uncertain };
}
