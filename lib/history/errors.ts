/**
 * Errors of the history contract. Each has a stable `name` and `code`; the reason an operation
 * failed is its `cause`, so callers test with `instanceof` or {@link findCause} (the Go
 * original's `errors.Is`/`errors.As`).
 */
export class HistoryError extends Error {
  override readonly name: string = "HistoryError";
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** A missing store where one is required. */
export class NilStoreError extends HistoryError {
  override readonly name: string = "NilStoreError";
  constructor() {
    super("HISTORY_NIL_STORE", "history: nil store");
  }
}

/** A conversation id that breaks one of the rules of `validateConversationId`. */
export class InvalidConversationIdError extends HistoryError {
  override readonly name: string = "InvalidConversationIdError";
  constructor(readonly reason: string) {
    super("HISTORY_INVALID_CONVERSATION_ID", `history: invalid conversation ID: ${reason}`);
  }
}

/** A message (or request) that is not well formed; `field` names what is at fault. */
export class InvalidMessageError extends HistoryError {
  override readonly name: string = "InvalidMessageError";
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super("HISTORY_INVALID_MESSAGE", `history: invalid message: ${field}: ${reason}`);
  }
}

/** Write facts that contradict themselves (see `validateWriteOutcome`). */
export class InvalidWriteOutcomeError extends HistoryError {
  override readonly name: string = "InvalidWriteOutcomeError";
  constructor(reason: string) {
    super("HISTORY_INVALID_WRITE_OUTCOME", `history: invalid write outcome: ${reason}`);
  }
}

/**
 * The first error in the `cause` chain of `error` (itself included, and the members of an
 * AggregateError) that is an instance of `type`.
 */
export function findCause<E extends Error>(
  error: unknown,
  type: abstract new (...args: never[]) => E,
): E | undefined {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0) {
    const current = pending.shift();
    if (current === undefined || current === null || seen.has(current)) continue;
    seen.add(current);
    if (current instanceof type) return current;
    if (current instanceof AggregateError) pending.push(...current.errors);
    if (current instanceof Error) pending.push(current.cause);
  }
  return undefined;
}

/** The message of an error, or the thrown value as text when it is not an Error. */
export function describeError(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

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
