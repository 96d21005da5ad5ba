/**
 * The question index on DynamoDB: the batch writes a saved result makes to it, a redaction's
 * writes (each conditional on the extraction it redacts), and a page of a channel's questions,
 * one Query.
 */
import { QueryCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { cancellationReasons } from "../../base/dynamodb/index.js";
import { KnowledgeItemError } from "../errors.js";
import type { QuestionStatus } from "../extraction/index.js";
import type { QuestionPage } from "./port.js";
import {
  questionEntriesOf,
  questionIndexChange,
  questionItemKey,
  questionPrefix,
} from "./question-entry.js";
import type { RedactionTable } from "./redaction-table.js";
import {
  type QuestionEntry,
  resultItemKey,
  SCHEMA_VERSION,
  type SegmentResult,
} from "./schema/items.js";
import { RESULTS_PARTITION_KEY, RESULTS_SORT_KEY } from "./schema/table.js";

const keyOf = (channel: string, item: string) => ({
  [RESULTS_PARTITION_KEY]: channel,
  [RESULTS_SORT_KEY]: item,
});

/**
 * The batch requests that make the index hold `result`'s questions: its entries put, and the
 * entries of `previous` it no longer has deleted (a changed status moves an entry's key).
 */
export function questionWrites(
  result: SegmentResult,
  previous: SegmentResult | undefined,
): Record<string, unknown>[] {
  const entries = questionEntriesOf(result);
  const { deleted } = questionIndexChange(previous ? questionEntriesOf(previous) : [], entries);
  return [
    ...entries.map((entry) => ({
      PutRequest: { Item: { ...keyOf(result.channel, questionItemKey(entry)), ...entry } },
    })),
    ...deleted.map((key) => ({ DeleteRequest: { Key: keyOf(result.channel, key) } })),
  ];
}

/** Entry writes per transaction, with the check of the result: DynamoDB allows 100 actions. */
const WRITES_PER_TRANSACTION = 99;

/**
 * A redaction's writes to the index: from `previous`'s entries to those of `next` (none when
 * the result is removed), each transaction only while the result is still `previous` (the
 * result's own condition), so that a stale redaction never writes over a re-extraction's
 * entries. False when another write came first: the caller plans again on what it wrote.
 */
export async function redactQuestions(
  table: RedactionTable,
  previous: SegmentResult,
  next: SegmentResult | undefined,
): Promise<boolean> {
  const { channel, segmentId, extractedAt, redactions } = previous;
  // The result's own condition: no re-extraction and no other redaction wrote it since.
  const unchanged = {
    ConditionExpression:
      redactions === undefined
        ? "extractedAt = :e AND attribute_not_exists(redactions)"
        : "extractedAt = :e AND redactions = :r",
    ExpressionAttributeValues: {
      ":e": extractedAt,
      ...(redactions !== undefined && { ":r": redactions }),
    },
  };
  const change = questionIndexChange(
    questionEntriesOf(previous),
    next ? questionEntriesOf(next) : [],
  );
  const writes = [
    ...change.put.map((entry) => ({
      Put: {
        TableName: table.tableName,
        Item: { ...keyOf(channel, questionItemKey(entry)), ...entry },
      },
    })),
    ...change.deleted.map((key) => ({
      Delete: { TableName: table.tableName, Key: keyOf(channel, key) },
    })),
  ];
  for (let i = 0; i < writes.length; i += WRITES_PER_TRANSACTION) {
    try {
      await table.documents.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              ConditionCheck: {
                TableName: table.tableName,
                Key: keyOf(channel, resultItemKey(segmentId)),
                ...unchanged,
              },
            },
            ...writes.slice(i, i + WRITES_PER_TRANSACTION),
          ],
        }),
      );
    } catch (error) {
      if (cancellationReasons(error)[0] === "ConditionalCheckFailed") return false;
      throw error;
    }
  }
  return true;
}

/**
 * At most `limit` of the channel's question entries of `status` (all statuses without), after
 * the sort key `after`, oldest first within a status: one Query (it reads one more to know
 * whether any follow).
 */
export async function listQuestions(
  table: RedactionTable,
  channel: string,
  options: { status?: QuestionStatus; limit: number; after?: string },
): Promise<QuestionPage> {
  const page = await table.documents.send(
    new QueryCommand({
      TableName: table.tableName,
      KeyConditionExpression: "#pk = :pk AND begins_with(#sk, :prefix)",
      ExpressionAttributeNames: { "#pk": RESULTS_PARTITION_KEY, "#sk": RESULTS_SORT_KEY },
      ExpressionAttributeValues: { ":pk": channel, ":prefix": questionPrefix(options.status) },
      Limit: options.limit + 1,
      ...(options.after !== undefined && { ExclusiveStartKey: keyOf(channel, options.after) }),
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  const items = page.Items ?? [];
  const kept = items.slice(0, options.limit);
  const entries = kept.map((item) => {
    if (item.v !== SCHEMA_VERSION) {
      throw new KnowledgeItemError(
        `${channel}/${item[RESULTS_SORT_KEY]}`,
        "not a v1 question entry",
      );
    }
    const { [RESULTS_SORT_KEY]: _key, ...entry } = item;
    return entry as QuestionEntry;
  });
  const more = items.length > options.limit || page.LastEvaluatedKey !== undefined;
  const last = kept.at(-1)?.[RESULTS_SORT_KEY];
  const next = more && typeof last === "string" ? last : null;
  const readUnits = page.ConsumedCapacity?.CapacityUnits;
  return readUnits === undefined ? { entries, next } : { entries, next, readUnits };
}
