import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { realSleep } from "../../base/backoff/index.js";
import {
  checkRetentionDays,
  DAY_MS,
  documentClient,
  expirySeconds,
} from "../../base/dynamodb/index.js";
import type {
  AuthorIndex,
  AuthorMessagesOptions,
  AuthorPage,
  AuthorQuery,
} from "../changes/authors.js";
import {
  type ChangeOptions,
  type ChangeResult,
  changeHoldMs,
  type Editor,
  type MessageChange,
  prepareChange,
} from "../changes/changes.js";
import { type ConversationId, validateConversationId } from "../conversation-id.js";
import { InvalidMessageError, MessageTooLargeError } from "../errors.js";
import type { Message } from "../message.js";
import { NOTHING_WRITTEN, WriteError, type WriteOutcome } from "../outcome.js";
import {
  LeaseReleaseError,
  type PositionAllocator,
  type PositionLease,
  SequenceAllocator,
} from "../positions/positions.js";
import { Sequence } from "../sequence.js";
import { type CallOptions, type Lister, prepareWrite, type Store } from "../store.js";
import type { TableAccess } from "./access.js";
import { type Arrival, arrivalContent, CONTENT_ATTRIBUTES, LINK_ATTRIBUTES } from "./arrivals.js";
import { authorMessages } from "./authors.js";
import { applyChange, type ChangeHold, settleChange } from "./changes.js";
import { clearConversation, listConversations, putConversationItem } from "./conversations.js";
import { type InferredReply, recordInferredReplies } from "./inferred-replies.js";
import { firstOccurrences, type PutResult, putMessage, writeOutcome } from "./puts.js";
import {
  getMessageFacts,
  getMessages,
  type MessageFacts,
  type PositionReadOptions,
  queryPositions,
} from "./reads.js";
import { decodePosition, itemMessage, messageItem, POSITION, storageProblem } from "./schema.js";

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
  /**
   * Days a message is kept (the deployment's `messageRetentionDays`): each item written carries
   * `expiresAt`, its platform time (`ts`, else the write) plus this, for DynamoDB's TTL. Default:
   * kept until deleted.
   */
  retentionDays?: number;
  /**
   * Hours a change of an id not stored is held, 1 to 720 (default 24; see `Editor`): a message
   * arriving meanwhile is refused after a held deletion, stored with a held edit applied.
   */
  changeHoldHours?: number;
  /**
   * The clock of writes, which an expiry already past is moved up to, and of held changes
   * (default: the wall clock).
   */
  now?: () => number;
}

/** A stored message with its arrival position. */
export interface PositionedMessage {
  position: bigint;
  message: Message;
}

/** Messages written under one position lease: small enough to release the lease quickly. */
const LEASE_MESSAGES = 100;

/**
 * The history store on DynamoDB (schema in `./schema.ts`). Each message is one conditional put
 * (`attribute_not_exists`, or only a held change whose hold is over: `./puts.ts`): a message
 * whose platform id is already stored fails its condition and is kept as it was (its stored
 * version is reported in the outcome's `existing`), so re-ingesting is a no-op, a retried put
 * never stores anything twice, and an ambiguous failure (a timeout after the write) resolves
 * itself on retry. A batch write cannot carry conditions, and a transaction
 * bills every item twice; single puts cost one write unit per KB plus the index entry.
 *
 * Puts run a few at a time under a position lease from the allocator, one lease per hundred
 * messages, released once its puts are done.
 */
export class DynamoDbStore implements Store, Lister, Editor, AuthorIndex {
  private readonly access: TableAccess;
  private readonly positions: PositionAllocator;
  private readonly concurrency: number;
  private readonly retentionMs: number | undefined;
  private readonly hold: ChangeHold;
  private readonly now: () => number;
  /**
   * Conversations whose listing item this process wrote or found: one conditional put per
   * conversation and process, not per write. A `clear` from another process is not seen here,
   * so a conversation cleared elsewhere and written again by this process stays unlisted until
   * another process writes it.
   */
  private readonly listed = new Set<string>();

  constructor(options: DynamoDbStoreOptions) {
    this.access = {
      documents: documentClient(options.client),
      tableName: options.tableName,
      maxAttempts: options.maxAttempts ?? 8,
      pacing: {
        baseDelayMs: options.baseDelayMs ?? 25,
        maxDelayMs: options.maxDelayMs ?? 2000,
        random: options.random ?? Math.random,
        sleep: options.sleep ?? realSleep,
      },
    };
    this.positions = options.positions ?? new SequenceAllocator(new Sequence());
    this.concurrency = options.concurrency ?? 16;
    this.retentionMs =
      options.retentionDays === undefined
        ? undefined
        : checkRetentionDays(options.retentionDays, "retentionDays") * DAY_MS;
    this.now = options.now ?? Date.now;
    this.hold = { ms: changeHoldMs(options.changeHoldHours), now: this.now };
  }

  async read(conversationId: ConversationId, options?: CallOptions): Promise<Message[]> {
    const messages: Message[] = [];
    for await (const stored of this.readAfter(conversationId, undefined, options)) {
      if (!stored.message.deleted) messages.push(stored.message);
    }
    return messages;
  }

  /**
   * The messages of a conversation that arrived after position `after` (from the start when
   * undefined) and, with `upTo`, at or before that position, in arrival order, read page by page
   * from the `byPosition` index with strong consistency (whole items: the index fetches what it
   * does not hold from the table). Deleted messages come flagged, without content.
   */
  async *readAfter(
    conversationId: ConversationId,
    after: bigint | undefined,
    options?: PositionReadOptions,
  ): AsyncIterable<PositionedMessage> {
    for await (const item of queryPositions(
      this.access,
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
   * it: positions, platform ids and timestamps, never message text. Cheap to read in bulk. With
   * `links`, also each one's `thread` and `replyTo`: the index does not project them, so
   * DynamoDB fetches each item from the table (read units by whole item size; no schema change).
   */
  async *arrivalsAfter(
    conversationId: ConversationId,
    after: bigint | undefined,
    options?: PositionReadOptions & { links?: boolean; content?: boolean },
  ): AsyncIterable<Arrival> {
    const attributes =
      options?.content === true
        ? CONTENT_ATTRIBUTES
        : options?.links === true
          ? LINK_ATTRIBUTES
          : "ALL_PROJECTED_ATTRIBUTES";
    for await (const item of queryPositions(
      this.access,
      conversationId,
      after,
      options,
      attributes,
    )) {
      const arrival: Arrival = { position: decodePosition(item[POSITION] as string) };
      if (typeof item.id === "string") arrival.id = item.id;
      if (typeof item.ts === "number") arrival.ts = item.ts;
      if (typeof item.thread === "string" && item.thread !== "") arrival.thread = item.thread;
      if (typeof item.replyTo === "string" && item.replyTo !== "") arrival.replyTo = item.replyTo;
      if (options?.content === true) arrival.content = arrivalContent(itemMessage(item));
      yield arrival;
    }
  }

  /** Records the reply linker's inferred parents on stored messages (`./inferred-replies.ts`). */
  recordInferredReplies(
    id: ConversationId,
    links: readonly InferredReply[],
    options?: CallOptions,
  ) {
    return recordInferredReplies(this.access, id, links, options);
  }

  /**
   * The messages of a conversation with the given platform ids, in the order of `ids`; ids that
   * are not stored (held changes included) are left out, deleted ones come flagged `deleted`
   * (without content). Reads by key in batches of 100, retrying unprocessed keys.
   */
  getMessages(
    conversationId: ConversationId,
    ids: readonly string[],
    options?: CallOptions,
  ): Promise<Message[]> {
    return getMessages(this.access, conversationId, ids, options);
  }

  /**
   * {@link getMessages} without the text: when, by whom, whether deleted (a digest's activity),
   * and the platform and thread (its links).
   */
  messageFacts(
    conversationId: ConversationId,
    ids: readonly string[],
    options?: CallOptions,
  ): Promise<MessageFacts[]> {
    return getMessageFacts(this.access, conversationId, ids, options);
  }

  /**
   * A page of the messages the authors named wrote (`AuthorIndex`), from the `byAuthor` index:
   * eventually consistent, keys only, one Query per page (per author and channel).
   */
  authorMessages(authors: AuthorQuery, options?: AuthorMessagesOptions): Promise<AuthorPage> {
    return authorMessages(this.access, authors, options);
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
        const now = this.now();
        const item = messageItem(
          conversationId,
          batch[index],
          lease.first + BigInt(offset),
          this.expiry(batch[index], now),
        );
        const result = await putMessage(this.access, item, now, signal);
        results.set(index, result);
        if (result.status === "failed") failed = true;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, chunk.length) }, worker));
    return started;
  }

  /** A message's TTL value: by its platform time, so an old import does not live longer. */
  private expiry(message: Message, now: number): number | undefined {
    if (this.retentionMs === undefined) return undefined;
    return expirySeconds(message.ts ?? now, this.retentionMs, now);
  }

  /**
   * An edit or deletion (`./changes.ts`): one conditional update, plus, for an id not stored, a
   * put that holds the change.
   */
  async change(
    conversationId: ConversationId,
    change: MessageChange,
    options?: ChangeOptions,
  ): Promise<ChangeResult> {
    prepareChange(conversationId, change, options);
    return applyChange(this.access, conversationId, change, this.hold, options);
  }

  settle(
    conversationId: ConversationId,
    change: MessageChange,
    options?: CallOptions,
  ): Promise<void> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    return settleChange(this.access, conversationId, change, options);
  }

  async clear(conversationId: ConversationId, options?: CallOptions): Promise<void> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    this.listed.delete(conversationId);
    await clearConversation(this.access, conversationId, options?.signal);
  }

  async conversations(options?: CallOptions): Promise<ConversationId[]> {
    options?.signal?.throwIfAborted();
    return listConversations(this.access);
  }

  /** The conversation's own item, put by the first write of the conversation in this process. */
  private async ensureListed(conversationId: string, signal?: AbortSignal): Promise<void> {
    if (this.listed.has(conversationId)) return;
    await putConversationItem(this.access, conversationId, signal);
    this.listed.add(conversationId);
  }
}
