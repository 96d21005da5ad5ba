import type { AttributeValue, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { realSleep } from "../../base/backoff/index.js";
import {
  batchWriteAll,
  cancellationReasons,
  documentClient,
  isConditionFailure,
} from "../../base/dynamodb/index.js";
import { KnowledgeItemError, LeaseLostError, SegmentBusyError } from "../errors.js";
import {
  NO_CALLS,
  normalizeTopic,
  type QuestionStatus,
  type SegmentTerms,
  type TermCounts,
  type WindowOutput,
} from "../extraction/index.js";
import type { QuestionCorrection } from "./correction-item.js";
import { listCorrections, saveCorrection } from "./correction-store.js";
import type { Lease, QuestionPage, ResultStore } from "./port.js";
import { listQuestions, questionWrites } from "./question-store.js";
import type { RedactionPlan } from "./redaction-plan.js";
import { deleteWindows, findSpans, saveRedaction, spanPut, widenSpans } from "./redaction-store.js";
import type { RedactionTable } from "./redaction-table.js";
import { queryPrefix } from "./redaction-table.js";
import {
  leaseItemKey,
  RESULT_PREFIX,
  resultItemKey,
  SCHEMA_VERSION,
  type SegmentResult,
  type SegmentSpan,
  type SegmentUsage,
  supportItemKey,
  TOPIC_PREFIX,
  type TopicSupport,
  windowItemKey,
} from "./schema/items.js";
import { RESULTS_PARTITION_KEY, RESULTS_SORT_KEY, RESULTS_TTL_ATTRIBUTE } from "./schema/table.js";
import {
  countSegmentTerms,
  readTermCounts,
  removeMatchingTerms,
  type TermTable,
  withdrawSegmentTerms,
} from "./term-store.js";

export interface DynamoDbResultStoreOptions {
  client: DynamoDBClient;
  tableName: string;
}

const BATCH_PACING = {
  baseDelayMs: 50,
  maxDelayMs: 2000,
  random: Math.random,
  sleep: realSleep,
};
const MAX_BATCH_ATTEMPTS = 8;

/** The results table on DynamoDB (`resultsTableDefinition`). */
export class DynamoDbResultStore implements ResultStore {
  private readonly documents: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly terms: TermTable;
  private readonly redaction: RedactionTable;

  constructor(options: DynamoDbResultStoreOptions) {
    this.documents = documentClient(options.client);
    this.tableName = options.tableName;
    this.terms = {
      documents: this.documents,
      tableName: this.tableName,
      pacing: BATCH_PACING,
      maxAttempts: MAX_BATCH_ATTEMPTS,
    };
    this.redaction = this.terms;
  }

  findSpans(channel: string, times: readonly number[]): Promise<SegmentSpan[]> {
    return findSpans(this.redaction, channel, times);
  }

  deleteWindows(channel: string, hashes: readonly string[]): Promise<void> {
    return deleteWindows(this.redaction, channel, hashes);
  }

  saveRedaction(previous: SegmentResult, plan: RedactionPlan): Promise<boolean> {
    return saveRedaction(this.redaction, previous, plan);
  }

  listCorrections(channel: string): Promise<QuestionCorrection[]> {
    return listCorrections(this.redaction, channel);
  }

  saveCorrection(next?: QuestionCorrection, previous?: QuestionCorrection): Promise<boolean> {
    return saveCorrection(this.redaction, next, previous);
  }

  termCounts(
    channel: string,
    vocabulary: string,
    terms: readonly string[],
    segmentId: string,
  ): Promise<TermCounts> {
    return readTermCounts(this.terms, channel, vocabulary, terms, segmentId);
  }

  countTerms(channel: string, segmentId: string, terms: SegmentTerms): Promise<void> {
    return countSegmentTerms(this.terms, channel, segmentId, terms);
  }

  withdrawTerms(channel: string, segmentId: string): Promise<number> {
    return withdrawSegmentTerms(this.terms, channel, segmentId);
  }

  removeTerms(channel: string, matches: (term: string) => boolean): Promise<number> {
    return removeMatchingTerms(this.terms, channel, matches);
  }

  async getResult(channel: string, segmentId: string): Promise<SegmentResult | undefined> {
    const { Item } = await this.documents.send(
      new GetCommand({
        TableName: this.tableName,
        Key: this.key(channel, resultItemKey(segmentId)),
        ConsistentRead: true,
      }),
    );
    return Item === undefined ? undefined : readResult(Item);
  }

  async acquireLease(
    channel: string,
    segmentId: string,
    lease: { owner: string; now: number; leaseMs: number; expiresAt: number },
  ): Promise<Lease> {
    const until = lease.now + lease.leaseMs;
    try {
      const { Attributes } = await this.documents.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(channel, leaseItemKey(segmentId)),
          UpdateExpression: "SET v = :v, #owner = :owner, leaseUntil = :until, #ttl = :ttl",
          ConditionExpression:
            "attribute_not_exists(leaseUntil) OR leaseUntil < :now OR #owner = :owner",
          ExpressionAttributeNames: { "#owner": "owner", "#ttl": RESULTS_TTL_ATTRIBUTE },
          ExpressionAttributeValues: {
            ":v": SCHEMA_VERSION,
            ":owner": lease.owner,
            ":until": until,
            ":now": lease.now,
            ":ttl": Math.ceil(lease.expiresAt / 1000),
          },
          ReturnValues: "ALL_NEW",
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      );
      const windows = Attributes?.windows as Set<string> | undefined;
      return {
        owner: lease.owner,
        until,
        spent: spentOf(Attributes ?? {}),
        windows: [...(windows ?? [])],
      };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // The exception carries the item as DynamoDB wrote it, not as the document client reads it.
      const held = (error as { Item?: Record<string, AttributeValue> }).Item;
      throw new SegmentBusyError(segmentId, held ? Number(unmarshall(held).leaseUntil) : until);
    }
  }

  async releaseLease(
    channel: string,
    segmentId: string,
    owner: string,
    spent: SegmentUsage,
  ): Promise<void> {
    const add = {
      UpdateExpression: `ADD ${SPENT.map((_, i) => `${SPENT_ATTRIBUTES[i]} :s${i}`).join(", ")}`,
      ExpressionAttributeValues: Object.fromEntries(
        SPENT.map((field, i) => [`:s${i}`, spent[field]]),
      ),
    };
    const command = (release: boolean) =>
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.key(channel, leaseItemKey(segmentId)),
        UpdateExpression: release
          ? `REMOVE #owner, leaseUntil ${add.UpdateExpression}`
          : add.UpdateExpression,
        ConditionExpression: release ? "#owner = :owner" : undefined,
        ExpressionAttributeNames: release ? { "#owner": "owner" } : undefined,
        ExpressionAttributeValues: release
          ? { ...add.ExpressionAttributeValues, ":owner": owner }
          : add.ExpressionAttributeValues,
      });
    try {
      await this.documents.send(command(true));
    } catch (error) {
      // Another delivery holds the lease now: keep the count, leave its lease alone.
      if (!isConditionFailure(error)) throw error;
      await this.documents.send(command(false));
    }
  }

  async getWindow(channel: string, hash: string): Promise<WindowOutput | undefined> {
    const { Item } = await this.documents.send(
      new GetCommand({
        TableName: this.tableName,
        Key: this.key(channel, windowItemKey(hash)),
        ConsistentRead: true,
      }),
    );
    if (Item === undefined) return undefined;
    if (Item.v !== SCHEMA_VERSION || !Array.isArray(Item.candidates)) {
      throw new KnowledgeItemError(`${channel}/${Item[RESULTS_SORT_KEY]}`, "not a v1 window reply");
    }
    const output: WindowOutput = { candidates: Item.candidates, usage: Item.usage as SegmentUsage };
    if (Item.trimmed !== undefined) output.trimmed = Item.trimmed as WindowOutput["trimmed"];
    // A reply stored before questions were asked for has none.
    if (Array.isArray(Item.questions)) output.questions = Item.questions;
    return output;
  }

  async putWindow(
    channel: string,
    hash: string,
    output: WindowOutput,
    expiresAt: number,
    segmentId?: string,
  ): Promise<void> {
    if (segmentId !== undefined) {
      // Listed before it exists: a crash between leaves a hash to delete, never a reply unlisted.
      await this.documents.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(channel, leaseItemKey(segmentId)),
          UpdateExpression: "ADD windows :hash",
          ExpressionAttributeValues: { ":hash": new Set([hash]) },
        }),
      );
    }
    await this.documents.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...this.key(channel, windowItemKey(hash)),
          v: SCHEMA_VERSION,
          candidates: output.candidates,
          ...(output.questions === undefined ? {} : { questions: output.questions }),
          usage: output.usage,
          ...(segmentId === undefined ? {} : { segmentId }),
          // What the bounds cut, so that a retry reusing the reply reports it too.
          ...(output.trimmed === undefined ? {} : { trimmed: output.trimmed }),
          [RESULTS_TTL_ATTRIBUTE]: Math.ceil(expiresAt / 1000),
        },
      }),
    );
  }

  async saveResult(
    result: SegmentResult,
    supports: readonly TopicSupport[],
    previous: SegmentResult | undefined,
    owner: string,
  ): Promise<void> {
    const keep = new Set(supports.map((s) => supportItemKey(s.normalizedTopic, s.segmentId)));
    const stale = (previous?.candidates ?? []).map((c) =>
      supportItemKey(normalizeTopic(c.topic), result.segmentId),
    );
    await this.batchWrite([
      ...supports.map((support) => ({
        PutRequest: {
          Item: {
            ...this.key(result.channel, supportItemKey(support.normalizedTopic, support.segmentId)),
            ...support,
          },
        },
      })),
      ...stale
        .filter((key) => !keep.has(key))
        .map((key) => ({ DeleteRequest: { Key: this.key(result.channel, key) } })),
      ...questionWrites(result, previous),
      spanPut(result),
    ]);
    await widenSpans(this.redaction, result);
    try {
      await this.documents.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.tableName,
                Item: { ...this.key(result.channel, resultItemKey(result.segmentId)), ...result },
              },
            },
            {
              Delete: {
                TableName: this.tableName,
                Key: this.key(result.channel, leaseItemKey(result.segmentId)),
                ConditionExpression: "#owner = :owner",
                ExpressionAttributeNames: { "#owner": "owner" },
                ExpressionAttributeValues: { ":owner": owner },
              },
            },
          ],
        }),
      );
    } catch (error) {
      if (cancellationReasons(error)[1] === "ConditionalCheckFailed") {
        throw new LeaseLostError(result.segmentId);
      }
      throw error;
    }
  }

  async listResults(channel: string): Promise<SegmentResult[]> {
    return (await this.query(channel, RESULT_PREFIX)).map(readResult);
  }

  async listSupports(channel: string): Promise<TopicSupport[]> {
    return (await this.query(channel, TOPIC_PREFIX)).map((item) => {
      if (item.v !== SCHEMA_VERSION) {
        throw new KnowledgeItemError(
          `${channel}/${item[RESULTS_SORT_KEY]}`,
          "not a v1 topic entry",
        );
      }
      return withoutKeys(item) as unknown as TopicSupport;
    });
  }

  listQuestions(
    channel: string,
    options: { status?: QuestionStatus; limit: number; after?: string },
  ): Promise<QuestionPage> {
    return listQuestions(this.redaction, channel, options);
  }

  private query(channel: string, prefix: string): Promise<Record<string, unknown>[]> {
    return queryPrefix(this.redaction, channel, prefix, { consistent: false });
  }

  /** BatchWriteItem in chunks, retrying what DynamoDB leaves unprocessed. */
  private batchWrite(requests: Record<string, unknown>[]): Promise<void> {
    return batchWriteAll(requests, {
      documents: this.documents,
      tableName: this.tableName,
      maxAttempts: MAX_BATCH_ATTEMPTS,
      pacing: BATCH_PACING,
    });
  }

  private key(channel: string, item: string) {
    return { [RESULTS_PARTITION_KEY]: channel, [RESULTS_SORT_KEY]: item };
  }
}

const SPENT = [
  "calls",
  "inputTokens",
  "outputTokens",
  "cacheReadTokens",
  "cacheWriteTokens",
] as const;
const SPENT_ATTRIBUTES = SPENT.map((field) => `spent${field[0].toUpperCase()}${field.slice(1)}`);

function spentOf(item: Record<string, unknown>): SegmentUsage {
  const spent = { ...NO_CALLS };
  SPENT.forEach((field, i) => {
    spent[field] = Number(item[SPENT_ATTRIBUTES[i]] ?? 0);
  });
  return spent;
}

function readResult(item: Record<string, unknown>): SegmentResult {
  if (item.v !== SCHEMA_VERSION) {
    throw new KnowledgeItemError(
      `${item[RESULTS_PARTITION_KEY]}/${item[RESULTS_SORT_KEY]}`,
      `schema version ${JSON.stringify(item.v)} is not 1`,
    );
  }
  return withoutKeys(item) as unknown as SegmentResult;
}

/** An item without its sort key (its partition key is the `channel` field itself). */
function withoutKeys(item: Record<string, unknown>): Record<string, unknown> {
  const { [RESULTS_SORT_KEY]: _item, ...rest } = item;
  return rest;
}
