/**
 * A channel's term statistics on the results table: how many segments were counted and in how many
 * of them each term occurs, kept incrementally as segments are extracted, each segment counted
 * exactly once (its log items say which of its terms are in the counts).
 */
import {
  BatchGetCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { type Backoff, backoff } from "../../base/backoff/index.js";
import { cancellationReasons, isConditionFailure, isRetryable } from "../../base/dynamodb/index.js";
import { KnowledgeItemError } from "../errors.js";
import type { SegmentTerms, TermCounts } from "../extraction/index.js";
import { queryPrefix } from "./redaction-table.js";
import {
  SCHEMA_VERSION,
  TERM_LOG_PREFIX,
  TERM_PREFIX,
  TERMS_PREFIX,
  type TermLogEntry,
  termChunks,
  termItemKey,
  termLogKey,
  termLogPrefix,
  termsHeadKey,
} from "./schema/items.js";
import { RESULTS_PARTITION_KEY, RESULTS_SORT_KEY } from "./schema/table.js";

export interface TermTable {
  documents: DynamoDBDocumentClient;
  tableName: string;
  pacing: Backoff;
  maxAttempts: number;
}

/** BatchGetItem's limit on keys per call. */
const MAX_BATCH_GETS = 100;

const keyOf = (channel: string, item: string) => ({
  [RESULTS_PARTITION_KEY]: channel,
  [RESULTS_SORT_KEY]: item,
});

/**
 * What a segment has counted so far: the terms of its logged chunks, and whether the first chunk
 * (which also counted the segment) is among them.
 */
export function ownContribution(entries: readonly TermLogEntry[]): {
  counted: boolean;
  terms: Set<string>;
} {
  return {
    counted: entries.some((entry) => entry.chunk === 0),
    terms: new Set(entries.flatMap((entry) => entry.terms)),
  };
}

/** The channel's counts for `terms`, without what `segmentId` itself counted. */
export async function readTermCounts(
  table: TermTable,
  channel: string,
  vocabulary: string,
  terms: readonly string[],
  segmentId: string,
): Promise<TermCounts> {
  const own = ownContribution(await termLog(table, channel, vocabulary, segmentId));
  const { Item: head } = await table.documents.send(
    new GetCommand({
      TableName: table.tableName,
      Key: keyOf(channel, termsHeadKey(vocabulary)),
      ConsistentRead: true,
    }),
  );
  const counted = await termItems(table, channel, vocabulary, [...new Set(terms)]);
  const frequencies = new Map<string, number>();
  for (const [term, segments] of counted) {
    const others = segments - (own.terms.has(term) ? 1 : 0);
    if (others > 0) frequencies.set(term, others);
  }
  const segments = Number(head?.segments ?? 0) - (own.counted ? 1 : 0);
  return { segments: Math.max(0, segments), frequencies };
}

/** The segment's log items of `vocabulary`, in chunk order. */
async function termLog(
  table: TermTable,
  channel: string,
  vocabulary: string,
  segmentId: string,
): Promise<TermLogEntry[]> {
  const items = await queryPrefix(table, channel, termLogPrefix(vocabulary, segmentId));
  for (const item of items) {
    if (item.v !== SCHEMA_VERSION || !Array.isArray(item.terms)) {
      throw new KnowledgeItemError(`${channel}/${item[RESULTS_SORT_KEY]}`, "not a v1 term log");
    }
  }
  return items as unknown as TermLogEntry[];
}

/** The counted segments of each term that has an item, read strongly consistent. */
async function termItems(
  table: TermTable,
  channel: string,
  vocabulary: string,
  terms: readonly string[],
): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (let i = 0; i < terms.length; i += MAX_BATCH_GETS) {
    let keys: Record<string, unknown>[] = terms
      .slice(i, i + MAX_BATCH_GETS)
      .map((term) => keyOf(channel, termItemKey(vocabulary, term)));
    for (let attempt = 1; keys.length > 0; attempt++) {
      const result = await table.documents.send(
        new BatchGetCommand({
          RequestItems: { [table.tableName]: { Keys: keys, ConsistentRead: true } },
        }),
      );
      for (const item of result.Responses?.[table.tableName] ?? []) {
        found.set(String(item.term), Number(item.segments ?? 0));
      }
      keys = result.UnprocessedKeys?.[table.tableName]?.Keys ?? [];
      if (keys.length > 0) {
        if (attempt >= table.maxAttempts) {
          throw new Error(`knowledge: ${keys.length} term reads still unprocessed`);
        }
        await backoff(table.pacing, attempt);
      }
    }
  }
  return found;
}

/**
 * Counts the segment's terms into the channel's statistics, once: it reads which terms the
 * segment has counted already (its log), and counts the others chunk by chunk, each chunk in one
 * transaction with its log item, written only if no item holds that chunk number yet. So a retry,
 * a redelivery or a re-extraction never counts a term twice for a segment (a segment's counted
 * terms only grow), and the first chunk also counts the segment. A chunk taken meanwhile by
 * another writer makes it read the log again.
 */
export async function countSegmentTerms(
  table: TermTable,
  channel: string,
  segmentId: string,
  { vocabulary, terms }: SegmentTerms,
): Promise<void> {
  for (let round = 1; ; round++) {
    const log = await termLog(table, channel, vocabulary, segmentId);
    const plan = chunksToCount(segmentId, log, terms);
    let taken = false;
    for (const entry of plan) {
      taken = !(await transact(table, chunkActions(table, channel, vocabulary, entry)));
      if (taken) break;
    }
    if (!taken) return;
    if (round >= table.maxAttempts) {
      throw new Error(`knowledge: segment ${segmentId}: its term log kept changing while counting`);
    }
  }
}

/**
 * The chunks still to count for a segment, given its log: its terms not yet logged, in chunks
 * numbered after the logged ones (the first of a segment not yet counted is chunk 0).
 */
export function chunksToCount(
  segmentId: string,
  log: readonly TermLogEntry[],
  terms: readonly string[],
): TermLogEntry[] {
  const own = ownContribution(log);
  const remaining = terms.filter((term) => !own.terms.has(term));
  if (own.counted && remaining.length === 0) return [];
  const next = log.reduce((max, entry) => Math.max(max, entry.chunk + 1), 0);
  return termChunks(remaining).map((chunkTerms, i) => ({
    v: SCHEMA_VERSION,
    segmentId,
    chunk: next + i,
    terms: chunkTerms,
  }));
}

function chunkActions(
  table: TermTable,
  channel: string,
  vocabulary: string,
  entry: TermLogEntry,
): Record<string, unknown>[] {
  const add = (item: string, term?: string) => ({
    Update: {
      TableName: table.tableName,
      Key: keyOf(channel, item),
      UpdateExpression:
        term === undefined
          ? "SET v = :v ADD #segments :one"
          : "SET v = :v, #term = :term ADD #segments :one",
      ExpressionAttributeNames:
        term === undefined
          ? { "#segments": "segments" }
          : { "#segments": "segments", "#term": "term" },
      ExpressionAttributeValues: {
        ":v": SCHEMA_VERSION,
        ":one": 1,
        ...(term === undefined ? {} : { ":term": term }),
      },
    },
  });
  return [
    {
      Put: {
        TableName: table.tableName,
        Item: { ...keyOf(channel, termLogKey(vocabulary, entry.segmentId, entry.chunk)), ...entry },
        ConditionExpression: "attribute_not_exists(#sk)",
        ExpressionAttributeNames: { "#sk": RESULTS_SORT_KEY },
      },
    },
    ...(entry.chunk === 0 ? [add(termsHeadKey(vocabulary))] : []),
    ...entry.terms.map((term) => add(termItemKey(vocabulary, term), term)),
  ];
}

/**
 * One chunk's transaction, retried on conflicts and throttling. False when its log item exists
 * already: another writer took that chunk number.
 */
async function transact(table: TermTable, actions: Record<string, unknown>[]): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      await table.documents.send(new TransactWriteCommand({ TransactItems: actions as never }));
      return true;
    } catch (error) {
      if (cancellationReasons(error)[0] === "ConditionalCheckFailed") return false;
      if (!isRetryable(error) || attempt >= table.maxAttempts) throw error;
      await backoff(table.pacing, attempt);
    }
  }
}

/** The vocabularies the channel has statistics of: one head item each, no chat text. */
async function vocabularies(table: TermTable, channel: string): Promise<string[]> {
  const items = await queryPrefix(table, channel, TERMS_PREFIX, { projection: [RESULTS_SORT_KEY] });
  return items.map((item) => String(item[RESULTS_SORT_KEY]).slice(TERMS_PREFIX.length));
}

/**
 * Takes what `segmentId` counted out of the channel's statistics, in every vocabulary: per
 * logged chunk, one transaction deletes the log item, uncounts the segment (chunk 0) and each
 * term, deleting a term's item when the segment was its last, each conditional on the count
 * read, so that a concurrent count makes it read again rather than lose one. Resolves to how
 * many vocabularies it withdrew the segment from; a second run finds no log and withdraws none.
 * A re-extraction of the segment counts it anew from what is left of it.
 */
export async function withdrawSegmentTerms(
  table: TermTable,
  channel: string,
  segmentId: string,
): Promise<number> {
  let withdrawn = 0;
  for (const vocabulary of await vocabularies(table, channel)) {
    const log = await termLog(table, channel, vocabulary, segmentId);
    for (const entry of log) await withdrawChunk(table, channel, vocabulary, entry);
    if (log.length > 0) withdrawn++;
  }
  return withdrawn;
}

async function withdrawChunk(
  table: TermTable,
  channel: string,
  vocabulary: string,
  entry: TermLogEntry,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const counted = await termItems(table, channel, vocabulary, entry.terms);
    const segments = { "#segments": "segments" };
    const uncount = (term: string, was: number) => {
      const Key = keyOf(channel, termItemKey(vocabulary, term));
      const ExpressionAttributeValues = { ":was": was };
      return was <= 1
        ? {
            Delete: {
              TableName: table.tableName,
              Key,
              ConditionExpression: "#segments = :was",
              ExpressionAttributeNames: segments,
              ExpressionAttributeValues,
            },
          }
        : {
            Update: {
              TableName: table.tableName,
              Key,
              UpdateExpression: "ADD #segments :minus",
              ConditionExpression: "#segments = :was",
              ExpressionAttributeNames: segments,
              ExpressionAttributeValues: { ...ExpressionAttributeValues, ":minus": -1 },
            },
          };
    };
    const actions = [
      {
        Delete: {
          TableName: table.tableName,
          Key: keyOf(channel, termLogKey(vocabulary, entry.segmentId, entry.chunk)),
          ConditionExpression: "attribute_exists(#sk)",
          ExpressionAttributeNames: { "#sk": RESULTS_SORT_KEY },
        },
      },
      // The head keeps its count (no chat text): a segment is uncounted, the head never removed.
      ...(entry.chunk === 0
        ? [
            {
              Update: {
                TableName: table.tableName,
                Key: keyOf(channel, termsHeadKey(vocabulary)),
                UpdateExpression: "ADD #segments :minus",
                ExpressionAttributeNames: segments,
                ExpressionAttributeValues: { ":minus": -1 },
              },
            },
          ]
        : []),
      // A term the log lists but no item holds was removed already (a name erased).
      ...[...counted].map(([term, was]) => uncount(term, was)),
    ];
    try {
      await table.documents.send(new TransactWriteCommand({ TransactItems: actions as never }));
      return;
    } catch (error) {
      const reasons = cancellationReasons(error);
      // The log item is gone: another withdrawal took this chunk out.
      if (reasons[0] === "ConditionalCheckFailed") return;
      if (!isRetryable(error) || attempt >= table.maxAttempts) throw error;
      await backoff(table.pacing, attempt);
    }
  }
}

/**
 * Removes every term `matches` picks (a person's name, say) from the channel's statistics in
 * every vocabulary: first from each segment's log that lists it, then the term's own item, so
 * that a run stopped between finds the items again. Reads the channel's whole statistics (one
 * Query per item kind and vocabulary). Resolves to how many term items it deleted.
 */
export async function removeMatchingTerms(
  table: TermTable,
  channel: string,
  matches: (term: string) => boolean,
): Promise<number> {
  let removed = 0;
  for (const vocabulary of await vocabularies(table, channel)) {
    const logs = await queryPrefix(table, channel, `${TERM_LOG_PREFIX}${vocabulary}#`);
    for (const log of logs) {
      const terms = (log.terms as string[] | undefined) ?? [];
      const kept = terms.filter((term) => !matches(term));
      if (kept.length === terms.length) continue;
      await table.documents
        .send(
          new UpdateCommand({
            TableName: table.tableName,
            Key: keyOf(channel, String(log[RESULTS_SORT_KEY])),
            UpdateExpression: "SET terms = :kept",
            ConditionExpression: "attribute_exists(#sk)",
            ExpressionAttributeNames: { "#sk": RESULTS_SORT_KEY },
            ExpressionAttributeValues: { ":kept": kept },
          }),
        )
        .catch((error: unknown) => {
          // Withdrawn meanwhile: nothing of it is left to clean.
          if (!isConditionFailure(error)) throw error;
        });
    }
    const items = await queryPrefix(table, channel, `${TERM_PREFIX}${vocabulary}#`, {
      projection: [RESULTS_SORT_KEY, "term"],
    });
    for (const item of items) {
      if (!matches(String(item.term))) continue;
      await table.documents.send(
        new DeleteCommand({
          TableName: table.tableName,
          Key: keyOf(channel, String(item[RESULTS_SORT_KEY])),
        }),
      );
      removed++;
    }
  }
  return removed;
}
