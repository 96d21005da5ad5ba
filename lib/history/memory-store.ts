import { compareIds } from "../base/identity/index.js";
import {
  type AuthoredMessage,
  type AuthorIndex,
  type AuthorMessagesOptions,
  type AuthorPage,
  type AuthorQuery,
  authorMatches,
  decodeCursor,
  encodeCursor,
  prepareAuthorQuery,
} from "./changes/authors.js";
import {
  type ChangeOptions,
  type ChangeResult,
  changeHoldMs,
  changeMark,
  type Editor,
  holdEnd,
  holdOver,
  type MessageChange,
  prepareChange,
} from "./changes/changes.js";
import type { ChannelNames } from "./changes/channel-names.js";
import { type ConversationId, validateConversationId } from "./conversation-id.js";
import { type Arrival, arrivalContent } from "./dynamodb/arrivals.js";
import type { InferredReply } from "./dynamodb/inferred-replies.js";
import { cloneMessage, type Message, messageText, redacted } from "./message.js";
import { type ExistingMessage, NOTHING_WRITTEN, WriteError, type WriteOutcome } from "./outcome.js";
import {
  LeaseReleaseError,
  type PositionAllocator,
  SequenceAllocator,
} from "./positions/positions.js";
import { type CallOptions, type Lister, prepareWrite, type Store } from "./store.js";

export interface MemoryStoreOptions {
  /** Where arrival positions come from (default: an in-process sequence). */
  positions?: PositionAllocator;
  /** Hours a change of an id not stored is held, 1 to 720 (default 24; see `Editor`). */
  changeHoldHours?: number;
  /** The clock holds are reckoned by (default: the wall clock). */
  now?: () => number;
}

interface Entry {
  /** Absent for a held change (of an id not stored), which no reader sees as a message. */
  position?: bigint;
  message: Message;
  /** The mark of a tracked change awaiting `settle`. */
  mark?: string;
  /** A held change's end, epoch seconds: after it, the entry no longer counts. */
  heldUntil?: number;
}

type Positioned = Entry & { position: bigint };

/**
 * The reference store: conversations in memory, in arrival order, one message per platform id.
 * Ready to use as constructed; every read and write copies, so callers never share its state.
 * Like the DynamoDB store it gives every message an arrival position from its allocator and
 * answers the reads the pipeline makes (`arrivalsAfter`, `getMessages`), so whole pipelines can
 * run in memory. Edits and deletions (`Editor`) follow the DynamoDB store's rules.
 */
export class MemoryStore implements Store, Lister, Editor, AuthorIndex, ChannelNames {
  private readonly positions: PositionAllocator;
  private readonly holdMs: number;
  private readonly now: () => number;
  private readonly conversationsById = new Map<
    ConversationId,
    { entries: Positioned[]; byId: Map<string, Entry> }
  >();

  constructor(options: MemoryStoreOptions = {}) {
    this.positions = options.positions ?? new SequenceAllocator();
    this.holdMs = changeHoldMs(options.changeHoldHours);
    this.now = options.now ?? Date.now;
  }

  async read(conversationId: ConversationId, options?: CallOptions): Promise<Message[]> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    return this.entries(conversationId)
      .filter((entry) => !entry.message.deleted)
      .map((entry) => cloneMessage(entry.message));
  }

  /**
   * Appends in argument order at positions from the allocator; a message whose platform id is
   * already stored, or deleted by a held deletion, is skipped and reported in `existing`; one
   * with a held edit is stored with the edit applied.
   */
  async write(
    conversationId: ConversationId,
    messages: readonly Message[],
    options?: CallOptions,
  ): Promise<WriteOutcome> {
    const batch = prepareWrite(conversationId, messages, options);
    if (batch.length === 0) return NOTHING_WRITTEN;
    const conversation = this.conversation(conversationId);
    const existing: ExistingMessage[] = [];
    const fresh: Message[] = [];
    const seen = new Map<string, Message>();
    const now = this.now();
    batch.forEach((message, index) => {
      const entry = message.id === undefined ? undefined : conversation.byId.get(message.id);
      const held = heldChange(entry, now);
      const stored =
        entry?.position !== undefined
          ? entry.message
          : held?.deleted
            ? held
            : message.id === undefined
              ? undefined
              : seen.get(message.id);
      if (stored !== undefined) {
        existing.push({ index, stored: cloneMessage(stored) });
        return;
      }
      if (message.id !== undefined) seen.set(message.id, message);
      // A written message never carries `editedAt` (`snapshotBatch`): a held edit is newer.
      fresh.push(
        held === undefined
          ? message
          : {
              ...message,
              parts: [{ type: "text", text: messageText(held) }],
              editedAt: held.editedAt,
            },
      );
    });
    if (fresh.length > 0) {
      const lease = await this.positions.reserve(conversationId, fresh.length, options?.signal);
      fresh.forEach((message, i) => {
        const entry = { position: lease.first + BigInt(i), message };
        insertByPosition(conversation.entries, entry);
        if (message.id !== undefined) conversation.byId.set(message.id, entry);
      });
      try {
        await lease.release();
      } catch (error) {
        throw new WriteError(outcomeOf(batch.length, existing), new LeaseReleaseError(error));
      }
    }
    return outcomeOf(batch.length, existing);
  }

  /** What arrived after position `after` (and at or before `upTo`), in arrival order. */
  async *arrivalsAfter(
    conversationId: ConversationId,
    after: bigint | undefined,
    options?: CallOptions & { upTo?: bigint; links?: boolean; content?: boolean },
  ): AsyncIterable<Arrival> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    for (const { position, message } of this.entries(conversationId)) {
      if (after !== undefined && position <= after) continue;
      if (options?.upTo !== undefined && position > options.upTo) break;
      const arrival: Arrival = { position, id: message.id, ts: message.ts };
      if (options?.links === true) {
        if (message.thread !== undefined) arrival.thread = message.thread;
        if (message.replyTo !== undefined) arrival.replyTo = message.replyTo;
      }
      if (options?.content === true) arrival.content = arrivalContent(message);
      yield arrival;
    }
  }

  /** Records the reply linker's inferred parents on the stored messages still here. */
  async recordInferredReplies(
    conversationId: ConversationId,
    links: readonly InferredReply[],
    options?: CallOptions,
  ): Promise<void> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    const byId = this.conversationsById.get(conversationId)?.byId;
    for (const link of links) {
      const entry = byId?.get(link.id);
      if (entry !== undefined) entry.message.inferredReplyTo = link.parent;
    }
  }

  /**
   * The messages with the given platform ids, in the order of `ids`; missing ones (and held
   * changes) left out, deleted ones flagged `deleted` (without content).
   */
  async getMessages(
    conversationId: ConversationId,
    ids: readonly string[],
    options?: CallOptions,
  ): Promise<Message[]> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    const byId = this.conversationsById.get(conversationId)?.byId;
    return ids.flatMap((id) => {
      const entry = byId?.get(id);
      return entry?.position === undefined ? [] : [cloneMessage(entry.message)];
    });
  }

  /**
   * A page of the messages the authors named wrote (`AuthorIndex`): by conversation (code point
   * order, or the order of `channels`), then arrival, all references at once. Exact, unlike the
   * DynamoDB index (which pages each reference in turn: callers rely on neither order).
   */
  async authorMessages(authors: AuthorQuery, options?: AuthorMessagesOptions): Promise<AuthorPage> {
    const { refs, limit, channels } = prepareAuthorQuery(authors, options);
    const scopes = channels ?? [...this.conversationsById.keys()].sort(compareIds);
    // After [conversation, position] of the last message returned: stable under deletions.
    const [at, after]: [string | undefined, string | undefined] = options?.cursor
      ? decodeCursor(options.cursor, isAuthorCursor)
      : [undefined, undefined];
    let from = at === undefined ? 0 : scopes.indexOf(at);
    // A conversation cleared since: go on with the next one.
    if (from < 0 && channels === undefined) {
      from = scopes.findIndex((id) => compareIds(id, at ?? "") > 0);
    }
    if (from < 0) return { messages: [] };
    const messages: AuthoredMessage[] = [];
    let last: [string, string] | undefined;
    for (let c = from; c < scopes.length; c++) {
      for (const { position, message } of this.entries(scopes[c])) {
        if (scopes[c] === at && after !== undefined && position <= BigInt(after)) continue;
        if (message.id === undefined || message.deleted) continue;
        if (!refs.some((ref) => authorMatches(message, ref))) continue;
        if (last !== undefined && messages.length === limit) {
          return { messages, cursor: encodeCursor(last) };
        }
        messages.push({
          conversationId: scopes[c],
          id: message.id,
          ...(message.ts === undefined ? {} : { ts: message.ts }),
        });
        last = [scopes[c], position.toString()];
      }
    }
    return { messages };
  }

  async change(
    conversationId: ConversationId,
    change: MessageChange,
    options?: ChangeOptions,
  ): Promise<ChangeResult> {
    prepareChange(conversationId, change, options);
    const conversation = this.conversation(conversationId);
    const entry = conversation.byId.get(change.id);
    const mark = changeMark(change);
    if (entry?.position === undefined) {
      this.hold(conversation.byId, change, heldChange(entry, this.now()));
      return { status: "missing", wasDeleted: false };
    }
    const { message } = entry;
    const facts = { ...(message.ts === undefined ? {} : { ts: message.ts }) };
    const wasDeleted = message.deleted === true;
    if (
      wasDeleted ||
      (change.kind === "edit" && (message.editedAt ?? -Infinity) >= change.editedAt)
    ) {
      const replay =
        change.kind === "delete" ||
        (!wasDeleted &&
          message.editedAt === change.editedAt &&
          messageText(message) === change.text);
      if (!replay) return { status: wasDeleted ? "unchanged" : "stale", ...facts, wasDeleted };
      return { status: entry.mark === mark ? "applied" : "unchanged", ...facts, wasDeleted };
    }
    entry.message =
      change.kind === "delete"
        ? redacted(message)
        : { ...message, parts: [{ type: "text", text: change.text }], editedAt: change.editedAt };
    if (options?.track) entry.mark = mark;
    else delete entry.mark;
    return { status: "applied", ...facts, wasDeleted };
  }

  /**
   * Holds a change of an id not stored, unless the held change in force outweighs it: a held
   * deletion any edit, a held edit one no newer. A held edit has no author (an edit names none),
   * so an erasure by author cannot find its text: no reader sees it, a `clear` removes it, and
   * once its message arrives it is that message's text, which an erasure finds.
   */
  private hold(byId: Map<string, Entry>, change: MessageChange, held: Message | undefined): void {
    if (held?.deleted) return;
    if (change.kind === "edit" && (held?.editedAt ?? -Infinity) >= change.editedAt) return;
    const message: Message =
      change.kind === "delete"
        ? { role: "user", parts: [], id: change.id, deleted: true }
        : {
            role: "user",
            parts: [{ type: "text", text: change.text }],
            id: change.id,
            editedAt: change.editedAt,
          };
    byId.set(change.id, { message, heldUntil: holdEnd(this.now(), this.holdMs) });
  }

  async clearChannelName(
    conversationId: ConversationId,
    name: string,
    except: readonly string[] = [],
  ): Promise<number> {
    validateConversationId(conversationId);
    let cleared = 0;
    for (const { message } of this.conversationsById.get(conversationId)?.byId.values() ?? []) {
      if (message.channelName !== name || except.includes(message.id ?? "")) continue;
      delete message.channelName;
      cleared++;
    }
    return cleared;
  }

  async settle(
    conversationId: ConversationId,
    change: MessageChange,
    options?: CallOptions,
  ): Promise<void> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    const entry = this.conversationsById.get(conversationId)?.byId.get(change.id);
    if (entry?.mark === changeMark(change)) delete entry.mark;
  }

  async clear(conversationId: ConversationId, options?: CallOptions): Promise<void> {
    options?.signal?.throwIfAborted();
    validateConversationId(conversationId);
    this.conversationsById.delete(conversationId);
  }

  async conversations(options?: CallOptions): Promise<ConversationId[]> {
    options?.signal?.throwIfAborted();
    return [...this.conversationsById.keys()].sort(compareIds);
  }

  private conversation(conversationId: ConversationId) {
    let conversation = this.conversationsById.get(conversationId);
    if (!conversation) {
      conversation = { entries: [], byId: new Map() };
      this.conversationsById.set(conversationId, conversation);
    }
    return conversation;
  }

  private entries(conversationId: ConversationId): Positioned[] {
    return this.conversationsById.get(conversationId)?.entries ?? [];
  }
}

const isAuthorCursor = (value: unknown): value is [string, string] =>
  Array.isArray(value) &&
  value.length === 2 &&
  typeof value[0] === "string" &&
  typeof value[1] === "string" &&
  /^\d+$/.test(value[1]);

/** The message of a held change still in force at `now`, or undefined. */
function heldChange(entry: Entry | undefined, now: number): Message | undefined {
  return entry?.heldUntil === undefined || holdOver(entry.heldUntil, now)
    ? undefined
    : entry.message;
}

function outcomeOf(accepted: number, existing: ExistingMessage[]): WriteOutcome {
  return existing.length > 0
    ? { accepted, uncertain: false, existing }
    : { accepted, uncertain: false };
}

/** Keeps entries in position order; positions of concurrent writers may commit out of order. */
function insertByPosition(entries: Positioned[], entry: Positioned): void {
  let at = entries.length;
  while (at > 0 && entries[at - 1].position > entry.position) at--;
  entries.splice(at, 0, entry);
}
