import { isPositiveInteger } from "../../base/numbers/index.js";
import {
  type CallOptions,
  type ConversationId,
  HistoryError,
  type Message,
  type Metadata,
  NilStoreError,
  type Part,
  type Store,
  type WriteOutcome,
} from "../index.js";

/** A window limit that is not a positive integer. */
export class InvalidWindowError extends HistoryError {
  override readonly name: string = "InvalidWindowError";
  constructor(reason: string) {
    super("HISTORY_INVALID_WINDOW", `history: invalid message window: ${reason}`);
  }
}

/** The newest turn alone does not fit the window, and a turn is never split. */
export class WindowTooSmallError extends HistoryError {
  override readonly name: string = "WindowTooSmallError";
  constructor(
    readonly newestTurnSize: number,
    readonly available: number,
  ) {
    super(
      "HISTORY_WINDOW_TOO_SMALL",
      `history: message window too small: newest turn has ${newestTurnSize} messages, available limit is ${available}`,
    );
  }
}

/** Placed between the parts of consecutive system messages when they are merged. */
const SYSTEM_SEPARATOR = "\n\n";

/**
 * A read-side retention decorator: reads return at most `limit` messages, bounded by complete
 * turns rather than a raw message count, because cutting a turn in the middle strands a tool
 * result from its call (or a final answer from its reasoning). All system messages are merged
 * into one leading message, which counts as one toward the limit. Writes and clears reach the
 * underlying store unchanged, so it stays the authoritative, complete history.
 */
export class WindowStore implements Store {
  private readonly store: Store;
  readonly limit: number;

  constructor(store: Store | null | undefined, limit: number) {
    if (store === null || store === undefined) throw new NilStoreError();
    if (!isPositiveInteger(limit)) {
      throw new InvalidWindowError("limit must be greater than zero");
    }
    this.store = store;
    this.limit = limit;
  }

  /**
   * The merged system message, then the newest complete turns that fit. Errors of the underlying
   * read pass through unchanged; a {@link WindowTooSmallError} when the newest turn cannot fit.
   */
  async read(conversationId: ConversationId, options?: CallOptions): Promise<Message[]> {
    return projectWindow(await this.store.read(conversationId, options), this.limit);
  }

  write(
    conversationId: ConversationId,
    messages: readonly Message[],
    options?: CallOptions,
  ): Promise<WriteOutcome> {
    return this.store.write(conversationId, messages, options);
  }

  clear(conversationId: ConversationId, options?: CallOptions): Promise<void> {
    return this.store.clear(conversationId, options);
  }
}

/**
 * The window of `messages` (a detached read result, so its parts can be reused): one merged
 * system message first, if there is any, then the contiguous suffix of whole turns that fits.
 */
function projectWindow(messages: readonly Message[], limit: number): Message[] {
  const systemMessages = messages.filter((message) => message.role === "system");
  const system = systemMessages.length > 0 ? [mergeSystemMessages(systemMessages)] : [];
  const turns = recentTurns(groupTurns(messages), limit - system.length);
  return [...system, ...turns.flat()];
}

/**
 * Merges system messages in order into one: their parts with a separator text part between
 * messages, and their metadata with later keys overwriting earlier ones.
 */
function mergeSystemMessages(systemMessages: readonly Message[]): Message {
  const parts: Part[] = [];
  const metadata: Metadata = {};
  systemMessages.forEach((message, i) => {
    if (i > 0) parts.push({ type: "text", text: SYSTEM_SEPARATOR });
    parts.push(...message.parts);
    Object.assign(metadata, message.metadata);
  });
  return Object.keys(metadata).length > 0
    ? { role: "system", parts, metadata }
    : { role: "system", parts };
}

/**
 * The non-system messages grouped into turns: each user message starts one, and so does the
 * first message when no turn exists yet (leading assistant or tool messages form their own turn).
 */
function groupTurns(messages: readonly Message[]): Message[][] {
  const turns: Message[][] = [];
  for (const message of messages) {
    if (message.role === "system") continue;
    const current = turns.at(-1);
    if (message.role === "user" || current === undefined) turns.push([message]);
    else current.push(message);
  }
  return turns;
}

/**
 * The newest turns that fit in `available` messages, oldest first. The newest turn must fit
 * whole; older turns are added while they fit, stopping at the first that does not, so the
 * result is a contiguous suffix of the conversation.
 */
function recentTurns(turns: Message[][], available: number): Message[][] {
  const newest = turns.at(-1);
  if (newest === undefined) return [];
  if (newest.length > available) throw new WindowTooSmallError(newest.length, available);
  let first = turns.length - 1;
  let count = newest.length;
  while (first > 0 && turns[first - 1].length <= available - count) {
    first--;
    count += turns[first].length;
  }
  return turns.slice(first);
}
