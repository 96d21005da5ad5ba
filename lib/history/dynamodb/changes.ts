/**
 * Edits and deletions on the messages table: one conditional update per change, so that a replay
 * or an older edit changes nothing whatever the order changes arrive in, and a tombstone for the
 * deletion of an id not stored yet.
 */
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { backoff } from "../../base/backoff/index.js";
import { isAmbiguous, isConditionFailure, isRetryable } from "../../base/dynamodb/index.js";
import {
  ChangeError,
  type ChangeOptions,
  type ChangeResult,
  changeMark,
  type MessageChange,
} from "../changes/changes.js";
import type { CallOptions } from "../store.js";
import { putIfAbsent, type TableAccess, updateIf } from "./access.js";
import {
  AUTHOR_KEY,
  DELETED,
  EDITED_AT,
  PARTITION_KEY,
  PENDING,
  POSITION,
  SCHEMA_VERSION,
  SORT_KEY,
} from "./schema.js";

type Item = Record<string, unknown>;

const NAMES = {
  "#k": SORT_KEY,
  "#d": DELETED,
  "#pend": PENDING,
};

/**
 * Applies one change, retrying transient failures. Once an attempt was ambiguous, a retry that
 * finds this very change in place reports it `applied`: the earlier attempt did it.
 */
export async function applyChange(
  access: TableAccess,
  conversation: string,
  change: MessageChange,
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
        // A tombstone has no position: the message is still not stored.
        if (old?.[POSITION] !== undefined) return replayed(change, old, ambiguous);
        if (change.kind === "edit" || old !== undefined) {
          return { status: "missing", wasDeleted: false };
        }
        if (await putTombstone(access, conversation, change.id, options?.signal)) {
          return { status: "missing", wasDeleted: false };
        }
        // The message arrived meanwhile: delete it.
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
 * The conditional update of a change; resolves with the item as it was. An edit needs a stored,
 * undeleted message whose `editedAt` is older; a deletion, a stored undeleted one. A deletion
 * removes the text (`parts`), `author` (and its `authorKey`), `userId` and `metadata`.
 */
async function update(
  access: TableAccess,
  conversation: string,
  change: MessageChange,
  options?: ChangeOptions,
): Promise<Item> {
  const names: Record<string, string> = { ...NAMES };
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  const removes: string[] = [];
  let condition = "attribute_exists(#k) AND attribute_not_exists(#d)";
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
 * Records the deletion of an id not stored; false when the id got stored meanwhile. Only the
 * first message wins a conditional put of its key, so the message, arriving later, is refused.
 */
async function putTombstone(
  access: TableAccess,
  conversation: string,
  id: string,
  signal?: AbortSignal,
): Promise<boolean> {
  try {
    return await putIfAbsent(
      access,
      {
        [PARTITION_KEY]: conversation,
        [SORT_KEY]: `m#${id}`,
        v: SCHEMA_VERSION,
        id,
        [DELETED]: true,
      },
      signal,
    );
  } catch (error) {
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
