import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  paginateQuery,
} from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { type Backoff, backoff, realSleep } from "../../backoff/index.js";
import {
  batchWriteAll,
  documentClient,
  isAmbiguous,
  isConditionFailure,
  isRetryable,
} from "../../dynamodb/index.js";
import { compareIds } from "../../identity/index.js";
import { type ConversationId, validateConversationId } from "../conversation-id.js";
import { HistoryError, InvalidMessageError } from "../errors.js";
import type { Message } from "../message.js";
import {
  type ExistingMessage,
  NOTHING_WRITTEN,
  WriteError,
  type WriteOutcome,
} from "../outcome.js";
import {
  LeaseReleaseError,
  type PositionAllocator,
  type PositionLease,
  SequenceAllocator,
} from "../positions.js";
import { Sequence } from "../sequence.js";
import { type CallOptions, type Lister, prepareWrite, type Store } from "../store.js";
import {
  BY_POSITION_INDEX,
  CONVERSATION_ITEM_KEY,
  CONVERSATIONS_INDEX,
  decodePosition,
  encodePosition,
  itemMessage,
  LISTED,
  LISTED_VALUE,
  type MessageItem,
  messageItem,
  PARTITION_KEY,
  POSITION,
  SORT_KEY,
  storageProblem,
} from "./schema.js";

/** A message larger than DynamoDB's item limit: rejected whole, never truncated. */
export class MessageTooLargeError extends HistoryError {
  override readonly name: string = "MessageTooLargeError";
  constructor(
    readonly index: number,
    reason: string,
  ) {
    super("HISTORY_MESSAGE_TOO_LARGE", `history/dynamodb: messages[${index}] ${reason}`);
  }
}

export interface DynamoDbStoreOptions {
  client: DynamoDBClient;
  tableName: string;
  /** Where arrival positions come from (default: this process's own {@link Sequence}). */
  positions?: PositionAllocator;
  /** Attempts per request before a write gives up (default 8). */
  maxAttempts?: number;
  /** Puts in flight at once within one write (default 16). */
  concurrency?: number;
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

/** What the `byPosition` index holds of an arrival: its position, platform id and timestamp. */
export interface Arrival {
  position: bigint;
  id?: string;
  ts?: number;
}

/** Messages written under one position lease: small enough to release the lease quickly. */
const LEASE_MESSAGES = 100;
const MAX_BATCH_DELETES = 25;
const MAX_BATCH_GETS = 100;

type PutResult =
  | { status: "stored" }
  | { status: "existing"; stored: Message }
  | { status: "failed"; error: unknown; ambiguous: boolean };

/**
 * The history store on DynamoDB (schema in `./schema.ts`). Each message is one conditional put
 * (`attribute_not_exists`): a message whose platform id is already stored fails its condition and
 * is kept as it was (its stored version is reported in the outcome's `existing`), so re-ingesting
 * is a no-op, a retried put never stores anything twice, and an ambiguous failure (a timeout after
 * the write) resolves itself on retry. A batch write cannot carry conditions, and a transaction
 * bills every item twice; single puts cost one write unit per KB plus the index entry.
 *
 * Puts run a few at a time under a position lease from the allocator, one lease per hundred
 * messages, released once its puts are done.
 */
export class DynamoDbStore implements Store, Lister {
  private readonly documents: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly positions: PositionAllocator;
  private readonly maxAttempts: number;
  private readonly concurrency: number;
  private readonly pacing: Backoff;
  /**
   * Conversations whose listing item this process wrote or found: one conditional put per
   * conversation and process, not per write. A `clear` from another process is not seen here,
   * so a conversation cleared elsewhere and written again by this process stays unlisted until
   * another process writes it.
   */
  private readonly listed = new Set<string>();

  constructor(options: DynamoDbStoreOptions) {
    this.documents = documentClient(options.client);
    this.tableName = options.tableName;
    this.positions = options.positions ?? new SequenceAllocator(new Sequence());
    this.maxAttempts = options.maxAttempts ?? 8;
    this.concurrency = options.concurrency ?? 16;
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
   * from the `byPosition` index with strong consistency (whole items: the index fetches what it
   * does not hold from the table).
   */
  async *readAfter(
    conversationId: ConversationId,
    after: bigint | undefined,
    options?: CallOptions & { pageSize?: number; upTo?: bigint },
  ): AsyncIterable<PositionedMessage> {
    for await (const item of this.queryPositions(
      conversationId,
      after,
      options,
      "ALL_ATTRIBUTES",
    )) {
      yield { position: decodePosition(item[POSITION] as string), message: itemMessage(item) };
    }
  }

  /**
   * What arrived after position `after` (and, with `upTo`, at or before it), as the index holds
   * it: positions, platform ids and timestamps, never message text. Cheap to read in bulk.
   */
  async *arrivalsAfter(
    conversationId: ConversationId,
    after: bigint | undefined,
    options?: CallOptions & { pageSize?: number; upTo?: bigint },
  ): AsyncIterable<Arrival> {
    for await (const item of this.queryPositions(
      conversationId,
      after,
      options,
      "ALL_PROJECTED_ATTRIBUTES",
    )) {
      const arrival: Arrival = { position: decodePosition(item[POSITION] as string) };
      if (typeof item.id === "string") arrival.id = item.id;
      if (typeof item.ts === "number") arrival.ts = item.ts;
      yield arrival;
    }
  }

  private async *queryPositions(
    conversationId: ConversationId,
    after: bigint | undefined,
    options: (CallOptions & { pageSize?: number; upTo?: bigint }) | undefined,
    select: "ALL_ATTRIBUTES" | "ALL_PROJECTED_ATTRIBUTES",
  ): AsyncIterable<Record<string, unknown>> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    const from = encodePosition(after === undefined ? 0n : after + 1n);
    const to = encodePosition(options?.upTo ?? Sequence.MAX);
    if (from > to) return;
    const pages = paginateQuery(
      { client: this.documents, pageSize: options?.pageSize },
      {
        TableName: this.tableName,
        IndexName: BY_POSITION_INDEX,
        ConsistentRead: true,
        Select: select,
        KeyConditionExpression: "#c = :c AND #p BETWEEN :from AND :to",
        ExpressionAttributeNames: { "#c": PARTITION_KEY, "#p": POSITION },
        ExpressionAttributeValues: { ":c": conversationId, ":from": from, ":to": to },
      },
      ...(options?.signal ? [{ abortSignal: options.signal }] : []),
    );
    for await (const page of pages) yield* page.Items ?? [];
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
      let keys: Record<string, unknown>[] = [...new Set(ids.slice(i, i + MAX_BATCH_GETS))].map(
        (id) => ({ [PARTITION_KEY]: conversationId, [SORT_KEY]: `m#${id}` }),
      );
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
    for (const [index, message] of batch.entries()) {
      const problem = storageProblem(conversationId, message);
      if (problem === undefined) continue;
      const error =
        problem.part === "size"
          ? new MessageTooLargeError(index, problem.reason)
          : new InvalidMessageError(
              problem.part === "id" ? `messages[${index}].id` : "conversationId",
              problem.reason,
            );
      throw new WriteError(NOTHING_WRITTEN, error);
    }
    try {
      await this.ensureListed(conversationId, options?.signal);
    } catch (error) {
      throw new WriteError(NOTHING_WRITTEN, error);
    }
    const firstOf = firstOccurrences(batch);
    const results = new Map<number, PutResult>();
    const failure = await this.putAll(
      conversationId,
      batch,
      [...new Set(firstOf)],
      results,
      options?.signal,
    );
    const outcome = writeOutcome(batch, firstOf, results);
    const cause =
      failure ??
      [...results.values()].find(
        (r): r is Extract<PutResult, { status: "failed" }> => r.status === "failed",
      )?.error;
    if (cause !== undefined) throw new WriteError(outcome, cause);
    return outcome;
  }

  /**
   * Puts the distinct messages `pending` (batch indexes, in order) under successive leases;
   * returns the error that stopped it early (a lease that could not be reserved or released), or
   * undefined. A failed put stops the write after the puts in flight finish.
   */
  private async putAll(
    conversationId: ConversationId,
    batch: Message[],
    pending: number[],
    results: Map<number, PutResult>,
    signal?: AbortSignal,
  ): Promise<unknown> {
    let next = 0;
    while (next < pending.length) {
      const chunk = pending.slice(next, next + LEASE_MESSAGES);
      let lease: PositionLease;
      try {
        lease = await this.positions.reserve(conversationId, chunk.length, signal);
      } catch (error) {
        return error;
      }
      // Puts report their own failures; the lease is released whatever they did.
      let started: number;
      try {
        started = await this.putUnderLease(conversationId, batch, chunk, lease, results, signal);
      } catch (error) {
        await lease.release().catch(() => undefined);
        throw error;
      }
      try {
        await lease.release();
      } catch (error) {
        // The puts are done and their outcome stands; the caller learns that readers were not told.
        return new LeaseReleaseError(error);
      }
      if (chunk.some((index) => results.get(index)?.status === "failed")) return undefined;
      next += started;
    }
    return undefined;
  }

  /**
   * Puts the messages of `chunk` at the lease's positions, `concurrency` at a time, in order;
   * starts none after the lease's `startBy` (but always the first) or after a failure. Returns
   * how many it started.
   */
  private async putUnderLease(
    conversationId: ConversationId,
    batch: Message[],
    chunk: number[],
    lease: PositionLease,
    results: Map<number, PutResult>,
    signal?: AbortSignal,
  ): Promise<number> {
    let started = 0;
    let failed = false;
    const worker = async () => {
      while (started < chunk.length && !failed) {
        if (started > 0 && lease.startBy !== undefined && performance.now() > lease.startBy) return;
        const offset = started++;
        const index = chunk[offset];
        const item = messageItem(conversationId, batch[index], lease.first + BigInt(offset));
        const result = await this.put(item, signal);
        results.set(index, result);
        if (result.status === "failed") failed = true;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, chunk.length) }, worker));
    return started;
  }

  /**
   * One conditional put, retried while the failure is transient. Once an attempt was ambiguous
   * the put stays uncertain whatever later attempts say, unless one proves it stored.
   */
  private async put(item: MessageItem, signal?: AbortSignal): Promise<PutResult> {
    let ambiguous = false;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.documents.send(
          new PutCommand({
            TableName: this.tableName,
            Item: item,
            ConditionExpression: "attribute_not_exists(#k)",
            ExpressionAttributeNames: { "#k": SORT_KEY },
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          }),
          { abortSignal: signal },
        );
        return { status: "stored" };
      } catch (error) {
        if (isConditionFailure(error)) return this.conditionFailed(item, error, ambiguous, signal);
        ambiguous ||= isAmbiguous(error);
        if (!isRetryable(error) || attempt >= this.maxAttempts || signal?.aborted) {
          return { status: "failed", error, ambiguous };
        }
        await this.backoff(attempt);
      }
    }
  }

  /**
   * What a failed condition means: the id is stored, by an earlier attempt of this very put when
   * an attempt was ambiguous and the stored item has this put's position, else before this write.
   * The stored item comes with the error (ALL_OLD), else is read; if it cannot be read, the put
   * counts as failed, and uncertain.
   */
  private async conditionFailed(
    item: MessageItem,
    error: unknown,
    ambiguous: boolean,
    signal?: AbortSignal,
  ): Promise<PutResult> {
    try {
      const old = await this.storedItem(item, error, signal);
      if (ambiguous && old[POSITION] === item.position) return { status: "stored" };
      return { status: "existing", stored: itemMessage(old) };
    } catch (readError) {
      return { status: "failed", error: readError, ambiguous: true };
    }
  }

  /** The item a failed condition found: from the error (ALL_OLD), else read consistently. */
  private async storedItem(
    item: MessageItem,
    error: unknown,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const old = (error as { Item?: Parameters<typeof unmarshall>[0] }).Item;
    if (old !== undefined) return unmarshall(old);
    const { Item: found } = await this.withRetries(() =>
      this.documents.send(
        new GetCommand({
          TableName: this.tableName,
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

  async clear(conversationId: ConversationId, options?: CallOptions): Promise<void> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    this.listed.delete(conversationId);
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
   * write of a conversation touches the conversations index; once per process.
   */
  private async ensureListed(conversationId: string, signal?: AbortSignal): Promise<void> {
    if (this.listed.has(conversationId)) return;
    try {
      await this.withRetries(() =>
        this.documents.send(
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
        ),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    this.listed.add(conversationId);
  }

  /** Deletes the keys, retrying unprocessed ones and retryable failures with backoff. */
  private deleteAll(keys: Record<string, unknown>[], signal?: AbortSignal): Promise<void> {
    return batchWriteAll(
      keys.map((key) => ({ DeleteRequest: { Key: key } })),
      {
        documents: this.documents,
        tableName: this.tableName,
        maxAttempts: this.maxAttempts,
        pacing: this.pacing,
        signal,
      },
    );
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

/**
 * For each message of the batch, the index of the first message with its platform id (itself
 * when it has none or is the first): a repeated id within a batch is the same message.
 */
function firstOccurrences(batch: Message[]): number[] {
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
function writeOutcome(
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
