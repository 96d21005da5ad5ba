/**
 * The results table's side of redaction on DynamoDB: the segment spans that find a changed
 * message's results from its timestamp, and the writes of a redaction, each conditional on the
 * extraction it redacts so that a stale one never overwrites a re-extraction.
 */
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { batchWriteAll, isConditionFailure } from "../../base/dynamodb/index.js";
import { KnowledgeError } from "../errors.js";
import { redactQuestions } from "./question-store.js";
import type { RedactionPlan } from "./redaction-plan.js";
import type { RedactionTable } from "./redaction-table.js";
import {
  resultItemKey,
  SCHEMA_VERSION,
  type SegmentResult,
  type SegmentSpan,
  SPAN_WIDTHS_KEY,
  type SpanWidths,
  spanItemKey,
  spanKeyRange,
  spanOf,
  supportItemKey,
  windowItemKey,
} from "./schema/items.js";
import { RESULTS_PARTITION_KEY, RESULTS_SORT_KEY, RESULTS_TTL_ATTRIBUTE } from "./schema/table.js";

const keyOf = (channel: string, item: string) => ({
  [RESULTS_PARTITION_KEY]: channel,
  [RESULTS_SORT_KEY]: item,
});

/**
 * The span item as a batch put request (written with the result's topic entries). It is kept
 * after its result expires (it holds two times and a segment id): what the segment counted into
 * the channel's term statistics, which are kept, is found through it when one of its messages
 * is deleted or its author erased.
 */
export function spanPut(result: SegmentResult): Record<string, unknown> {
  const span = spanOf(result);
  return { PutRequest: { Item: { ...keyOf(result.channel, spanItemKey(span)), ...span } } };
}

const EXPIRES = RESULTS_TTL_ATTRIBUTE;
/** Tries of the widths' read and conditional write when other results' writes keep coming first. */
const MAX_WIDEN_TRIES = 10;

/**
 * Raises the channel's widest span of the result's kind to the result's, if it is wider: the
 * item is every span's way in, kept as they are (an expiry an older version set is removed).
 * Read first, written only when something changes (most results
 * change nothing), and conditional on what was read, so that two writers never undo each other.
 */
export async function widenSpans(table: RedactionTable, result: SegmentResult): Promise<void> {
  const span = spanOf(result);
  const attribute = span.late ? "lateWidth" : "onTimeWidth";
  const width = span.lastTs - span.firstTs;
  const key = keyOf(result.channel, SPAN_WIDTHS_KEY);
  for (let tries = 0; tries < MAX_WIDEN_TRIES; tries++) {
    const { Item } = await table.documents.send(
      new GetCommand({ TableName: table.tableName, Key: key, ConsistentRead: true }),
    );
    const stored = Item?.[attribute] as number | undefined;
    const wider = stored === undefined || stored < width;
    // An expiry an older version set goes: the spans it leads to are kept now.
    const was = Item?.[EXPIRES] as number | undefined;
    if (!wider && was === undefined) return;
    const set = ["v = :v"];
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ":v": SCHEMA_VERSION };
    const conditions: string[] = [];
    if (wider) {
      set.push("#w = :w");
      names["#w"] = attribute;
      values[":w"] = width;
      conditions.push(stored === undefined ? "attribute_not_exists(#w)" : "#w = :was");
      if (stored !== undefined) values[":was"] = stored;
    }
    let remove = "";
    if (Item === undefined) {
      conditions.push("attribute_not_exists(#sk)");
      names["#sk"] = RESULTS_SORT_KEY;
    }
    if (was !== undefined) {
      names["#e"] = EXPIRES;
      remove = " REMOVE #e";
      conditions.push("#e = :ewas");
      values[":ewas"] = was;
    }
    try {
      await table.documents.send(
        new UpdateCommand({
          TableName: table.tableName,
          Key: key,
          UpdateExpression: `SET ${set.join(", ")}${remove}`,
          ...(conditions.length > 0 ? { ConditionExpression: conditions.join(" AND ") } : {}),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
      return;
    } catch (error) {
      // Another result's write came between the read and this one: read again.
      if (!isConditionFailure(error)) throw error;
    }
  }
  throw new KnowledgeError(
    "KNOWLEDGE_SPAN_WIDTHS_CONFLICT",
    `channel ${JSON.stringify(result.channel)}: its span widths kept changing during ${MAX_WIDEN_TRIES} tries to record segment ${result.segmentId}'s; retry`,
  );
}

/**
 * Time ranges to read for `times`: each time up to itself plus `width`, overlapping ranges
 * merged (so that a batch of changes close in time reads each span once).
 */
function lookupRanges(times: readonly number[], width: number): [number, number][] {
  const ranges: [number, number][] = [];
  for (const t of [...times].sort((a, b) => a - b)) {
    const last = ranges.at(-1);
    if (last !== undefined && t <= last[1]) last[1] = Math.max(last[1], t + width);
    else ranges.push([t, t + width]);
  }
  return ranges;
}

/** The spans (both kinds) that hold any of `times`: strongly consistent, written before results. */
export async function findSpans(
  table: RedactionTable,
  channel: string,
  times: readonly number[],
): Promise<SegmentSpan[]> {
  if (times.length === 0) return [];
  const { Item } = await table.documents.send(
    new GetCommand({
      TableName: table.tableName,
      Key: keyOf(channel, SPAN_WIDTHS_KEY),
      ConsistentRead: true,
    }),
  );
  if (Item === undefined) return [];
  const widths: SpanWidths = {
    onTime: Number(Item.onTimeWidth ?? -1),
    late: Number(Item.lateWidth ?? -1),
  };
  const found: SegmentSpan[] = [];
  for (const late of [false, true]) {
    const width = late ? widths.late : widths.onTime;
    if (width < 0) continue; // no segment of that kind yet
    for (const [from, to] of lookupRanges(times, width)) {
      const [low, high] = spanKeyRange(late, from, to);
      let start: Record<string, unknown> | undefined;
      do {
        const page = await table.documents.send(
          new QueryCommand({
            TableName: table.tableName,
            KeyConditionExpression: "#pk = :pk AND #sk BETWEEN :low AND :high",
            ExpressionAttributeNames: { "#pk": RESULTS_PARTITION_KEY, "#sk": RESULTS_SORT_KEY },
            ExpressionAttributeValues: { ":pk": channel, ":low": low, ":high": high },
            ConsistentRead: true,
            ExclusiveStartKey: start,
          }),
        );
        for (const item of page.Items ?? []) {
          const span = item as unknown as SegmentSpan;
          if (times.some((t) => span.firstTs <= t && t <= span.lastTs)) found.push(span);
        }
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
    }
  }
  return found;
}

export function deleteWindows(
  table: RedactionTable,
  channel: string,
  hashes: readonly string[],
): Promise<void> {
  return batchWriteAll(
    hashes.map((hash) => ({ DeleteRequest: { Key: keyOf(channel, windowItemKey(hash)) } })),
    table,
  );
}

/**
 * Writes a redaction: the topic entries moved or removed, each only while it is still the
 * redacted extraction's, the question entries as the redacted result's questions say, then the result (or its removal) only if no other write came first.
 * False when one did: the caller plans again on what it wrote.
 */
export async function saveRedaction(
  table: RedactionTable,
  previous: SegmentResult,
  plan: RedactionPlan,
): Promise<boolean> {
  const { channel, segmentId, extractedAt } = previous;
  // Entries written before entries carried `extractedAt` are taken as the result's own.
  const own = {
    ConditionExpression:
      "extractedAt = :e OR (attribute_exists(#sk) AND attribute_not_exists(extractedAt))",
    ExpressionAttributeNames: { "#sk": RESULTS_SORT_KEY },
    ExpressionAttributeValues: { ":e": extractedAt },
  };
  const guarded = async (write: () => Promise<unknown>) => {
    try {
      await write();
    } catch (error) {
      // A re-extraction rewrote or removed the entry: it is not this redaction's to change.
      if (!isConditionFailure(error)) throw error;
    }
  };
  for (const support of plan.supports) {
    await guarded(() =>
      table.documents.send(
        new PutCommand({
          TableName: table.tableName,
          Item: {
            ...keyOf(channel, supportItemKey(support.normalizedTopic, segmentId)),
            ...support,
          },
          ...own,
        }),
      ),
    );
  }
  for (const topic of plan.removedTopics) {
    await guarded(() =>
      table.documents.send(
        new DeleteCommand({
          TableName: table.tableName,
          Key: keyOf(channel, supportItemKey(topic, segmentId)),
          ...own,
        }),
      ),
    );
  }
  if (!(await redactQuestions(table, previous, plan.next))) return false;
  const current = {
    ConditionExpression:
      previous.redactions === undefined
        ? "extractedAt = :e AND attribute_not_exists(redactions)"
        : "extractedAt = :e AND redactions = :r",
    ExpressionAttributeValues: {
      ":e": extractedAt,
      ...(previous.redactions === undefined ? {} : { ":r": previous.redactions }),
    },
  };
  const key = keyOf(channel, resultItemKey(segmentId));
  try {
    if (plan.next === undefined) {
      await table.documents.send(
        new DeleteCommand({ TableName: table.tableName, Key: key, ...current }),
      );
    } else {
      await table.documents.send(
        new PutCommand({ TableName: table.tableName, Item: { ...key, ...plan.next }, ...current }),
      );
    }
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
