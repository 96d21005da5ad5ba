import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  paginateQuery,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { type Backoff, backoff, realSleep } from "../../backoff.js";
import { compareIds } from "../../messages/index.js";
import { type ConversationId, validateConversationId } from "../conversation-id.js";
import { HistoryError } from "../errors.js";
import type { Message } from "../message.js";
import { NOTHING_WRITTEN, WriteError, type WriteOutcome } from "../outcome.js";
import { Sequence } from "../sequence.js";
import { type CallOptions, type Lister, prepareWrite, type Store } from "../store.js";
import { documentClient } from "./documents.js";
import {
  BY_POSITION_INDEX,
  CONVERSATION_ITEM_KEY,
  CONVERSATIONS_INDEX,
  decodePosition,
  encodePosition,
  itemMessage,
  itemSize,
  LISTED,
  LISTED_VALUE,
  MAX_ITEM_BYTES,
  type MessageItem,
  messageItem,
  PARTITION_KEY,
  POSITION,
  SORT_KEY,
} from "./schema.js";

/** A message larger than DynamoDB's item limit: rejected whole, never truncated. */
export class MessageTooLargeError extends HistoryError {
  constructor(
    readonly index: number,
    readonly bytes: number,
  ) {
    super(
      "HISTORY_MESSAGE_TOO_LARGE",
      `history/dynamodb: messages[${index}] takes about ${bytes} bytes as an item, over DynamoDB's ${MAX_ITEM_BYTES}-byte limit`,
    );
  }
}

export interface DynamoDbStoreOptions {
  client: DynamoDBClient;
  tableName: string;
  /** Assigns arrival positions; share one per process. */
  sequence?: Sequence;
  /** Attempts per transaction before a write gives up (default 8). */
  maxAttempts?: number;
  /** Backoff: full jitter over `baseDelayMs * 2^attempt`, capped (defaults 25 ms, 2 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** A stored message with its arrival position. */
export interface PositionedMessage {
  position: bigint;
  message: Message;
}

/** DynamoDB allows 100 actions and 4 MB per transaction; stay a little under the latter. */
const MAX_TRANSACTION_ITEMS = 100;
const MAX_TRANSACTION_BYTES = 4_000_000;
const MAX_BATCH_DELETES = 25;
const MAX_BATCH_GETS = 100;

/**
 * The history store on DynamoDB (schema in `./schema.ts`). Messages are written in transactions
 * of up to 100 conditional puts (`attribute_not_exists`): a message whose platform id is already
 * stored fails its condition and is skipped, so re-ingesting is a no-op, a retried transaction
 * can never store anything twice, and an ambiguous failure (a timeout after the commit) resolves
 * itself on retry. BatchWriteItem cannot carry conditions: a re-ingested message would overwrite
 * its item and move its arrival position. Transactions commit in argument order and atomically,
 * so the write outcome is exact.
 */
export class DynamoDbStore implements Store, Lister {
  private readonly documents: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly sequence: Sequence;
  private readonly maxAttempts: number;
  private readonly pacing: Backoff;

  constructor(options: DynamoDbStoreOptions) {
    this.documents = documentClient(options.client);
    this.tableName = options.tableName;
    this.sequence = options.sequence ?? new Sequence();
    this.maxAttempts = options.maxAttempts ?? 8;
    this.pacing = {
      baseDelayMs: options.baseDelayMs ?? 25,
      maxDelayMs: options.maxDelayMs ?? 2000,
      random: options.random ?? Math.random,
      sleep: options.sleep ?? realSleep,
    };
  }

  async read(conversationId: ConversationId, options?: CallOptions): Promise<Message[]> {
    const messages: Message[] = [];
    for await (const stored of this.readAfter(conversationId, undefined, options)) {
      messages.push(stored.message);
    }
    return messages;
  }

  /**
   * The messages of a conversation that arrived after position `after` (from the start when
   * undefined) and, with `upTo`, at or before that position, in arrival order, read page by page
   * from the `byPosition` index with strong consistency.
   */
  async *readAfter(
    conversationId: ConversationId,
    after: bigint | undefined,
    options?: CallOptions & { pageSize?: number; upTo?: bigint },
  ): AsyncIterable<PositionedMessage> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    const from = encodePosition(after === undefined ? 0n : after + 1n);
    const to = encodePosition(options?.upTo ?? Sequence.MAX);
    const pages = paginateQuery(
      { client: this.documents, pageSize: options?.pageSize },
      {
        TableName: this.tableName,
        IndexName: BY_POSITION_INDEX,
        ConsistentRead: true,
        KeyConditionExpression: "#c = :c AND #p BETWEEN :from AND :to",
        ExpressionAttributeNames: { "#c": PARTITION_KEY, "#p": POSITION },
        ExpressionAttributeValues: { ":c": conversationId, ":from": from, ":to": to },
      },
      ...(options?.signal ? [{ abortSignal: options.signal }] : []),
    );
    for await (const page of pages) {
      for (const item of page.Items ?? []) {
        yield { position: decodePosition(item[POSITION] as string), message: itemMessage(item) };
      }
    }
  }

  /**
   * The messages of a conversation with the given platform ids, in the order of `ids`; ids that
   * are not stored are left out. Reads by key in batches of 100, retrying unprocessed keys.
   */
  async getMessages(
    conversationId: ConversationId,
    ids: readonly string[],
    options?: CallOptions,
  ): Promise<Message[]> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    const found = new Map<string, Message>();
    for (let i = 0; i < ids.length; i += MAX_BATCH_GETS) {
      let keys: Record<string, unknown>[] = ids
        .slice(i, i + MAX_BATCH_GETS)
        .map((id) => ({ [PARTITION_KEY]: conversationId, [SORT_KEY]: `m#${id}` }));
      for (let attempt = 1; keys.length > 0; attempt++) {
        const result = await this.withRetries(() =>
          this.documents.send(
            new BatchGetCommand({
              RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } },
            }),
            { abortSignal: options?.signal },
          ),
        );
        for (const item of result.Responses?.[this.tableName] ?? []) {
          found.set(item.id as string, itemMessage(item));
        }
        keys = result.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
        if (keys.length > 0) {
          if (attempt >= this.maxAttempts) {
            throw new Error(`history/dynamodb: ${keys.length} reads still unprocessed`);
          }
          await this.backoff(attempt);
        }
      }
    }
    return ids.flatMap((id) => {
      const message = found.get(id);
      return message ? [message] : [];
    });
  }

  async write(
    conversationId: ConversationId,
    messages: readonly Message[],
    options?: CallOptions,
  ): Promise<WriteOutcome> {
    const batch = prepareWrite(conversationId, messages, options);
    if (batch.length === 0) return NOTHING_WRITTEN;
    const first = this.sequence.reserve(batch.length);
    const items = batch.map((message, i) =>
      messageItem(conversationId, message, first + BigInt(i)),
    );
    const tooLarge = items.findIndex((item) => itemSize(item) > MAX_ITEM_BYTES);
    if (tooLarge >= 0) {
      throw new WriteError(
        NOTHING_WRITTEN,
        new MessageTooLargeError(tooLarge, itemSize(items[tooLarge])),
      );
    }
    try {
      await this.withRetries(() => this.putConversationItem(conversationId, options?.signal));
    } catch (error) {
      throw new WriteError(NOTHING_WRITTEN, error);
    }
    let accepted = 0;
    for (const chunk of transactionChunks(items)) {
      try {
        await this.commit(chunk.items, options?.signal);
      } catch (error) {
        throw new WriteError({ accepted, uncertain: isAmbiguous(error) }, error);
      }
      accepted = chunk.end;
    }
    return { accepted, uncertain: false };
  }

  async clear(conversationId: ConversationId, options?: CallOptions): Promise<void> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    const pages = paginateQuery(
      { client: this.documents },
      {
        TableName: this.tableName,
        ConsistentRead: true,
        KeyConditionExpression: "#c = :c",
        ProjectionExpression: "#c, #k",
        ExpressionAttributeNames: { "#c": PARTITION_KEY, "#k": SORT_KEY },
        ExpressionAttributeValues: { ":c": conversationId },
      },
    );
    for await (const page of pages) {
      const keys = page.Items ?? [];
      for (let i = 0; i < keys.length; i += MAX_BATCH_DELETES) {
        await this.deleteAll(keys.slice(i, i + MAX_BATCH_DELETES), options?.signal);
      }
    }
  }

  async conversations(options?: CallOptions): Promise<ConversationId[]> {
    options?.signal?.throwIfAborted();
    const ids: ConversationId[] = [];
    const pages = paginateQuery(
      { client: this.documents },
      {
        TableName: this.tableName,
        IndexName: CONVERSATIONS_INDEX,
        KeyConditionExpression: "#l = :l",
        ExpressionAttributeNames: { "#l": LISTED },
        ExpressionAttributeValues: { ":l": LISTED_VALUE },
      },
    );
    for await (const page of pages) {
      for (const item of page.Items ?? []) ids.push(item[PARTITION_KEY] as string);
    }
    // The index orders by UTF-8 bytes already; sorting again guards the contract cheaply.
    return ids.sort(compareIds);
  }

  /**
   * Creates the conversation's own item if it is missing. Conditional, so that only the first
   * write of a conversation touches the conversations index.
   */
  private async putConversationItem(conversationId: string, signal?: AbortSignal): Promise<void> {
    try {
      await this.documents.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            [PARTITION_KEY]: conversationId,
            [SORT_KEY]: CONVERSATION_ITEM_KEY,
            [LISTED]: LISTED_VALUE,
          },
          ConditionExpression: "attribute_not_exists(#k)",
          ExpressionAttributeNames: { "#k": SORT_KEY },
        }),
        { abortSignal: signal },
      );
    } catch (error) {
      if ((error as Error).name !== "ConditionalCheckFailedException") throw error;
    }
  }

  /**
   * Commits one transaction of conditional puts. Items whose condition fails are already stored
   * (same platform id, or an earlier attempt of this very transaction that did commit) and are
   * dropped; the rest is retried, after a backoff when something else cancelled it.
   */
  private async commit(items: MessageItem[], signal?: AbortSignal): Promise<void> {
    let pending = items;
    for (let attempt = 1; pending.length > 0; attempt++) {
      try {
        await this.documents.send(new TransactWriteCommand(this.conditionalPuts(pending)), {
          abortSignal: signal,
        });
        return;
      } catch (error) {
        const reasons = cancellationReasons(error);
        const stored = new Set(
          reasons.flatMap((r, i) => (r === "ConditionalCheckFailed" ? [i] : [])),
        );
        const onlyDuplicates =
          reasons.length > 0 &&
          reasons.every((r) => r === "ConditionalCheckFailed" || r === "None");
        if (stored.size > 0) pending = pending.filter((_, i) => !stored.has(i));
        if (onlyDuplicates && stored.size > 0) continue;
        if (!isRetryable(error) || attempt >= this.maxAttempts) throw error;
        await this.backoff(attempt);
      }
    }
  }

  private conditionalPuts(items: MessageItem[]): TransactWriteCommandInput {
    return {
      TransactItems: items.map((item) => ({
        Put: {
          TableName: this.tableName,
          Item: item,
          ConditionExpression: "attribute_not_exists(#k)",
          ExpressionAttributeNames: { "#k": SORT_KEY },
        },
      })),
    };
  }

  /** Deletes up to 25 keys, retrying the unprocessed ones with backoff. */
  private async deleteAll(keys: Record<string, unknown>[], signal?: AbortSignal): Promise<void> {
    let requests = keys.map((key) => ({ DeleteRequest: { Key: key } }));
    for (let attempt = 1; requests.length > 0; attempt++) {
      const result = await this.withRetries(() =>
        this.documents.send(
          new BatchWriteCommand({ RequestItems: { [this.tableName]: requests } }),
          {
            abortSignal: signal,
          },
        ),
      );
      requests = (result.UnprocessedItems?.[this.tableName] ?? []) as typeof requests;
      if (requests.length > 0) {
        if (attempt >= this.maxAttempts)
          throw new Error(`history/dynamodb: ${requests.length} deletes still unprocessed`);
        await this.backoff(attempt);
      }
    }
  }

  private async withRetries<R>(call: () => Promise<R>): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (error) {
        if (!isRetryable(error) || attempt >= this.maxAttempts) throw error;
        await this.backoff(attempt);
      }
    }
  }

  private backoff(attempt: number): Promise<void> {
    return backoff(this.pacing, attempt);
  }
}

interface TransactionChunk {
  items: MessageItem[];
  bytes: number;
  /** One past the index of the batch's last message this chunk accounts for. */
  end: number;
}

/**
 * Splits a batch into transactions in argument order. A platform id repeated within the batch is
 * the same message: its first occurrence stands for it, and the repeat is accounted for by the
 * chunk it falls in.
 */
function transactionChunks(items: MessageItem[]): TransactionChunk[] {
  const chunks: TransactionChunk[] = [];
  const seen = new Set<string>();
  let current: TransactionChunk | undefined;
  items.forEach((item, index) => {
    if (!seen.has(item.key)) {
      seen.add(item.key);
      const size = itemSize(item);
      const full =
        current === undefined ||
        current.items.length === MAX_TRANSACTION_ITEMS ||
        current.bytes + size > MAX_TRANSACTION_BYTES;
      if (full) {
        current = { items: [], bytes: 0, end: index };
        chunks.push(current);
      }
      current?.items.push(item);
      if (current) current.bytes += size;
    }
    if (current) current.end = index + 1;
  });
  return chunks;
}

function cancellationReasons(error: unknown): string[] {
  if ((error as Error).name !== "TransactionCanceledException") return [];
  const reasons =
    (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.map((reason) => reason.Code ?? "None");
}

const RETRYABLE = new Set([
  "TransactionCanceledException",
  "TransactionConflictException",
  "ProvisionedThroughputExceededException",
  "ThrottlingException",
  "RequestLimitExceeded",
  "InternalServerError",
  "ServiceUnavailable",
  "TimeoutError",
  "RequestTimeout",
]);

function isRetryable(error: unknown): boolean {
  const name = (error as Error).name;
  if (name === "AbortError") return false;
  if (name === "TransactionCanceledException") {
    return cancellationReasons(error).every(
      (r) => r !== "ValidationError" && r !== "ItemCollectionSizeLimitExceeded",
    );
  }
  return RETRYABLE.has(name) || isAmbiguous(error);
}

/**
 * Whether a failed request may still have been applied: the service erred after receiving it, or
 * the connection broke before an answer came.
 */
function isAmbiguous(error: unknown): boolean {
  const e = error as Error & { $metadata?: { httpStatusCode?: number }; code?: string };
  if (e.name === "AbortError") return true;
  if ((e.$metadata?.httpStatusCode ?? 0) >= 500) return true;
  return (
    e.name === "TimeoutError" ||
    e.name === "RequestTimeout" ||
    ["ECONNRESET", "ETIMEDOUT", "EPIPE"].includes(e.code ?? "")
  );
}
