/**
 * Edits and deletions on the messages table: one conditional update per change, so that a replay
 * or an older edit changes nothing whatever the order changes arrive in, and a held change (a put
 * that expires) for a change of an id not stored yet.
 */
import { PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { backoff } from "../../base/backoff/index.js";
import { isAmbiguous, isConditionFailure, isRetryable } from "../../base/dynamodb/index.js";
import {
  ChangeError,
  type ChangeOptions,
  type ChangeResult,
  changeMark,
  epochSeconds,
  holdEnd,
  type MessageChange,
} from "../changes/changes.js";
import type { CallOptions } from "../store.js";
import { type TableAccess, updateIf, withRetries } from "./access.js";
import {
  AUTHOR_KEY,
  DELETED,
  EDITED_AT,
  MESSAGES_TTL_ATTRIBUTE,
  PARTITION_KEY,
  PENDING,
  POSITION,
  SCHEMA_VERSION,
  SORT_KEY,
} from "./schema.js";

type Item = Record<string, unknown>;

/** How long a change of an id not stored is held, and the clock it is reckoned by. */
export interface ChangeHold {
  ms: number;
  now: () => number;
}

/**
 * Applies one change, retrying transient failures. Once an attempt was ambiguous, a retry that
 * finds this very change in place reports it `applied`: the earlier attempt did it.
 */
export async function applyChange(
  access: TableAccess,
  conversation: string,
  change: MessageChange,
  hold: ChangeHold,
  options?: ChangeOptions,
): Promise<ChangeResult> {
  let ambiguous = false;
  for (let attempt = 1; ; attempt++) {
    try {
      const old = await update(access, conversation, change, options);
      return { status: "applied", ...facts(old), wasDeleted: false };
    } catch (error) {
      if (isConditionFailure(error)) {
        const old = oldItem(error);
        // A held change has no position: the message is still not stored.
        if (old?.[POSITION] !== undefined) return replayed(change, old, ambiguous);
        if (await holdChange(access, conversation, change, hold, options?.signal)) {
          return { status: "missing", wasDeleted: false };
        }
        // The message arrived meanwhile: change it.
        continue;
      }
      ambiguous ||= isAmbiguous(error);
      if (!isRetryable(error) || attempt >= access.maxAttempts || options?.signal?.aborted) {
        throw new ChangeError(ambiguous, error);
      }
      await backoff(access.pacing, attempt);
    }
  }
}

/** Removes the mark of a tracked change, unless a later change replaced it. */
export async function settleChange(
  access: TableAccess,
  conversation: string,
  change: MessageChange,
  options?: CallOptions,
): Promise<void> {
  await updateIf(
    access,
    {
      Key: { [PARTITION_KEY]: conversation, [SORT_KEY]: `m#${change.id}` },
      UpdateExpression: "REMOVE #pend",
      ConditionExpression: "#pend = :mark",
      ExpressionAttributeNames: { "#pend": PENDING },
      ExpressionAttributeValues: { ":mark": changeMark(change) },
    },
    options?.signal,
  );
}

/**
 * The conditional update of a change; resolves with the item as it was. An edit needs a stored
 * (positioned), undeleted message whose `editedAt` is older; a deletion, a stored undeleted one.
 * A deletion removes the text (`parts`), `author` (and its `authorKey`), `userId` and `metadata`.
 */
async function update(
  access: TableAccess,
  conversation: string,
  change: MessageChange,
  options?: ChangeOptions,
): Promise<Item> {
  const names: Record<string, string> = { "#pos": POSITION, "#d": DELETED, "#pend": PENDING };
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  const removes: string[] = [];
  let condition = "attribute_exists(#pos) AND attribute_not_exists(#d)";
  if (change.kind === "edit") {
    names["#parts"] = "parts";
    names["#e"] = EDITED_AT;
    values[":parts"] = [{ type: "text", text: change.text }];
    values[":e"] = change.editedAt;
    sets.push("#parts = :parts", "#e = :e");
    condition += " AND (attribute_not_exists(#e) OR #e < :e)";
  } else {
    Object.assign(names, {
      "#parts": "parts",
      "#author": "author",
      "#uid": "userId",
      "#ak": AUTHOR_KEY,
      "#meta": "metadata",
      "#cn": "channelName",
    });
    values[":true"] = true;
    sets.push("#d = :true");
    // The author key goes with the author: the item leaves the `byAuthor` index.
    removes.push("#parts", "#author", "#ak", "#uid", "#meta", "#cn");
  }
  if (options?.track) {
    values[":mark"] = changeMark(change);
    sets.push("#pend = :mark");
  } else {
    removes.push("#pend");
  }
  const { Attributes } = await access.documents.send(
    new UpdateCommand({
      TableName: access.tableName,
      Key: { [PARTITION_KEY]: conversation, [SORT_KEY]: `m#${change.id}` },
      UpdateExpression: `SET ${sets.join(", ")}${removes.length > 0 ? ` REMOVE ${removes.join(", ")}` : ""}`,
      ConditionExpression: condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValues: "ALL_OLD",
      ReturnValuesOnConditionCheckFailure: "ALL_OLD",
    }),
    { abortSignal: options?.signal },
  );
  return Attributes ?? {};
}

/**
 * What a change whose condition failed on `old` means: a replay of a deletion, or of the same
 * edit (`applied` when its mark is still there or an earlier attempt was ambiguous), an edit of a
 * deleted message (`unchanged`), else an edit no newer than the stored one (`stale`).
 */
function replayed(change: MessageChange, old: Item, ambiguous: boolean): ChangeResult {
  const wasDeleted = old[DELETED] === true;
  const same =
    change.kind === "delete" ||
    (!wasDeleted && old[EDITED_AT] === change.editedAt && textOf(old) === change.text);
  if (!same) return { status: wasDeleted ? "unchanged" : "stale", ...facts(old), wasDeleted };
  const again = ambiguous || old[PENDING] === changeMark(change);
  return { status: again ? "applied" : "unchanged", ...facts(old), wasDeleted };
}

/**
 * Holds a change of an id not stored: a put of `m#<id>` without a position (so in no index),
 * carrying its hold's end as `expiresAt`, for the message's put to find (`./puts.ts`) and for
 * DynamoDB's TTL to remove unclaimed. It replaces no stored message, nor a held change in force
 * that outweighs it: a held deletion any edit, a held edit one no newer. True when the change is
 * held or outweighed, false when the message got stored meanwhile. A retry after a lost answer
 * finds its own item, which outweighs it: held all the same.
 *
 * A held edit has no author (an edit line names none), so an erasure by author cannot find its
 * text: no reader sees it, and it goes with the hold (TTL) or a `clear`; once its message
 * arrives, it is that message's text, which an erasure finds.
 */
async function holdChange(
  access: TableAccess,
  conversation: string,
  change: MessageChange,
  hold: ChangeHold,
  signal?: AbortSignal,
): Promise<boolean> {
  const now = hold.now();
  const item: Item = {
    [PARTITION_KEY]: conversation,
    [SORT_KEY]: `m#${change.id}`,
    v: SCHEMA_VERSION,
    id: change.id,
    [MESSAGES_TTL_ATTRIBUTE]: holdEnd(now, hold.ms),
  };
  const names: Record<string, string> = {
    "#k": SORT_KEY,
    "#pos": POSITION,
    "#exp": MESSAGES_TTL_ATTRIBUTE,
    "#d": DELETED,
  };
  const values: Record<string, unknown> = { ":now": epochSeconds(now) };
  let outweighs = "attribute_not_exists(#d)";
  if (change.kind === "delete") {
    item[DELETED] = true;
  } else {
    item.parts = [{ type: "text", text: change.text }];
    item[EDITED_AT] = change.editedAt;
    names["#e"] = EDITED_AT;
    values[":e"] = change.editedAt;
    outweighs += " AND #e < :e";
  }
  try {
    await withRetries(access, () =>
      access.documents.send(
        new PutCommand({
          TableName: access.tableName,
          Item: item,
          ConditionExpression: `attribute_not_exists(#k) OR (attribute_not_exists(#pos) AND (#exp < :now OR (${outweighs})))`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
        { abortSignal: signal },
      ),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return oldItem(error)?.[POSITION] === undefined;
    throw new ChangeError(false, error);
  }
}

/** The item a failed condition found (ALL_OLD), or undefined when there is none. */
function oldItem(error: unknown): Item | undefined {
  const old = (error as { Item?: Parameters<typeof unmarshall>[0] }).Item;
  return old === undefined ? undefined : unmarshall(old);
}

const facts = (item: Item): { ts?: number } => (typeof item.ts === "number" ? { ts: item.ts } : {});

function textOf(item: Item): string {
  const parts = (item.parts ?? []) as { type: string; text?: string }[];
  return parts.map((p) => (p.type === "text" ? (p.text ?? "") : "")).join("");
}
