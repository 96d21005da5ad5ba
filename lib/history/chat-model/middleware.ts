import {
  type ConversationId,
  cloneMessage,
  describeError,
  HistoryError,
  InvalidWriteOutcomeError,
  type Message,
  NilStoreError,
  type ReadWriter,
  validateConversationId,
  validateMessage,
  validateWriteOutcome,
  WriteError,
  type WriteOutcome,
} from "../index.js";
import {
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  type ChatStreamer,
  cloneRequest,
  type ModelCallOptions,
  type ResponseDelta,
  StreamAccumulator,
  validateRequest,
} from "./chat.js";
import { CommitError } from "./commit-error.js";

/** A streamer that returned no stream at all. */
export class NilStreamError extends HistoryError {
  override readonly name: string = "NilStreamError";
  constructor() {
    super("HISTORY_NIL_STREAM", "history: middleware: nil stream sequence");
  }
}

/** The middleware steps that can fail before or after the model runs. */
export type MiddlewareStep =
  | "prepare request"
  | "read history"
  | "stored message"
  | "assemble request history"
  | "accumulate stream"
  | "complete stream";

/**
 * A middleware step failed; `cause` is the original error (an `InvalidMessageError`, the store's
 * error, an AbortError, ...), so `findCause` reaches it. The code names the step, e.g.
 * `HISTORY_MIDDLEWARE_READ_HISTORY`; `index` is the stored message at fault.
 */
export class MiddlewareError extends HistoryError {
  override readonly name: string = "MiddlewareError";
  constructor(
    readonly step: MiddlewareStep,
    cause: unknown,
    readonly index?: number,
  ) {
    const where = index === undefined ? step : `${step} ${index}`;
    super(
      `HISTORY_MIDDLEWARE_${step.toUpperCase().replaceAll(" ", "_")}`,
      `history: middleware: ${where}: ${describeError(cause)}`,
      { cause },
    );
  }
}

/** A request bound to its conversation, ready for the model. */
interface PreparedTurn {
  conversationId: ConversationId;
  /** What the model receives: system prompt, stored history, then the fresh messages. */
  request: ChatRequest;
  /** A snapshot of the request's non-system messages: what is persisted with the answer. */
  fresh: Message[];
}

/** What one write attempt established; `error` is undefined for success. */
interface WriteFacts {
  outcome: WriteOutcome;
  error: unknown;
}

/**
 * Gives a chat model a memory: for a call bound to a conversation (a non-empty
 * `options.conversationId`), it replays the stored history before the request's fresh messages
 * and, after the model completes, appends the fresh messages and the answer in one write. Unbound
 * calls pass through untouched. Every non-system request message counts as fresh, so callers
 * send only new messages. It keeps no state of its own and does not serialize turns within one
 * conversation: the host owns turn ordering.
 */
export class Middleware {
  private readonly store: ReadWriter;

  constructor(store: ReadWriter | null | undefined) {
    if (store === null || store === undefined) throw new NilStoreError();
    this.store = store;
  }

  /**
   * Wraps `next`. A model error rejects unchanged and nothing is written; a failed write
   * rejects with a {@link CommitError} that still carries the completed response.
   */
  call(next: ChatModel): ChatModel {
    return { call: (request, options) => this.callWithHistory(next, request, options) };
  }

  /**
   * Wraps `next`, lazily: nothing is read and `next.stream` is not called until iteration starts.
   * The exchange is persisted only after the stream completes naturally; a consumer that stops
   * early, a provider error or a malformed delta leaves the store untouched. A failed write is
   * thrown as a {@link CommitError} after the terminal delta.
   */
  stream(next: ChatStreamer): ChatStreamer {
    return { stream: (request, options) => this.streamWithHistory(next, request, options) };
  }

  private async callWithHistory(
    next: ChatModel,
    request: ChatRequest,
    options?: ModelCallOptions,
  ): Promise<ChatResponse> {
    const conversationId = options?.conversationId;
    if (!conversationId) return next.call(request, options);
    const turn = await this.prepare(conversationId, request, options?.signal);
    const response = await next.call(turn.request, options);
    await this.commit(turn, response, options?.signal);
    return response;
  }

  private async *streamWithHistory(
    next: ChatStreamer,
    request: ChatRequest,
    options?: ModelCallOptions,
  ): AsyncGenerator<ResponseDelta, void, undefined> {
    const conversationId = options?.conversationId;
    if (!conversationId) {
      yield* startStream(next, request, options);
      return;
    }
    const turn = await this.prepare(conversationId, request, options?.signal);
    const accumulator = new StreamAccumulator();
    for await (const delta of startStream(next, turn.request, options)) {
      inStep("accumulate stream", () => accumulator.add(delta));
      yield delta;
    }
    const response = inStep("complete stream", () => accumulator.response());
    await this.commit(turn, response, options?.signal);
  }

  /**
   * Validates the id and the request, then assembles what the model receives: the request's
   * system messages (stored ones are dropped: the live system prompt wins), the stored non-system
   * history, then the fresh messages. Nothing reaches the model or the store unvalidated; the
   * assembled request is checked again because request rules span the whole message list.
   */
  private async prepare(
    conversationId: string,
    request: ChatRequest,
    signal: AbortSignal | undefined,
  ): Promise<PreparedTurn> {
    validateConversationId(conversationId);
    const snapshot = inStep("prepare request", () => {
      validateRequest(request);
      return cloneRequest(request);
    });
    const stored = await this.readHistory(conversationId, signal);
    const system = snapshot.messages.filter(isSystem);
    const fresh = snapshot.messages.filter((message) => !isSystem(message));
    const prepared = {
      ...snapshot,
      messages: [...system, ...stored.filter((message) => !isSystem(message)), ...fresh],
    };
    inStep("assemble request history", () => validateRequest(prepared));
    return { conversationId, request: prepared, fresh: fresh.map(cloneMessage) };
  }

  /** The stored history, each message validated: a corrupt store must not reach the model. */
  private async readHistory(
    conversationId: ConversationId,
    signal: AbortSignal | undefined,
  ): Promise<Message[]> {
    let stored: Message[];
    try {
      stored = await this.store.read(conversationId, { signal });
    } catch (error) {
      throw new MiddlewareError("read history", error);
    }
    stored.forEach((message, i) => {
      try {
        validateMessage(message);
      } catch (error) {
        throw new MiddlewareError("stored message", error, i);
      }
    });
    return stored;
  }

  /**
   * Appends the fresh messages and the answer in one write, when the answer is final; throws a
   * {@link CommitError} owning the attempted batch when the write fails.
   */
  private async commit(
    turn: PreparedTurn,
    response: ChatResponse,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    if (!isFinalAnswer(response)) return;
    const batch = [...turn.fresh, response.message];
    const { outcome, error } = await this.attemptWrite(turn.conversationId, batch, signal);
    if (error === undefined) return;
    const { conversationId } = turn;
    throw new CommitError({ conversationId, messages: batch, outcome, response, cause: error });
  }

  private async attemptWrite(
    conversationId: ConversationId,
    batch: Message[],
    signal: AbortSignal | undefined,
  ): Promise<WriteFacts> {
    let outcome: WriteOutcome;
    try {
      outcome = await this.store.write(conversationId, batch, { signal });
    } catch (error) {
      return rejectedWriteFacts(error, batch.length);
    }
    return checkedFacts(outcome, undefined, batch.length);
  }
}

/**
 * Calls `next.stream`, refusing a missing stream: consuming it would otherwise fail with a
 * TypeError far from its cause.
 */
function startStream(
  next: ChatStreamer,
  request: ChatRequest,
  options: ModelCallOptions | undefined,
): AsyncIterable<ResponseDelta> {
  const upstream = next.stream(request, options);
  if (upstream === null || upstream === undefined) throw new NilStreamError();
  return upstream;
}

/**
 * Whether `response` ends the exchange: an assistant message without tool calls. A tool-call
 * turn is deferred, because the next request carries the call and its result as fresh messages
 * and persists the whole exchange with the final answer; storing the call alone would leave a
 * call without a result in the history.
 */
function isFinalAnswer(response: ChatResponse | undefined): response is ChatResponse {
  const message = response?.message;
  return message?.role === "assistant" && !message.parts.some((part) => part.type === "tool-call");
}

/** The facts of a rejected write: only a WriteError carries an outcome. */
function rejectedWriteFacts(error: unknown, count: number): WriteFacts {
  if (error instanceof WriteError) return checkedFacts(error.outcome, error, count);
  const invalid = new InvalidWriteOutcomeError("a failed write must reject with a WriteError");
  return contradictoryFacts(error, invalid, count);
}

function checkedFacts(outcome: WriteOutcome, error: unknown, count: number): WriteFacts {
  const invalid = validateWriteOutcome(outcome, count, error);
  return invalid === undefined ? { outcome, error } : contradictoryFacts(error, invalid, count);
}

/**
 * Contradictory store facts cannot authorize a retry: nothing counts as accepted and the rest is
 * uncertain, and the contradiction is reported beside the write error.
 */
function contradictoryFacts(
  error: unknown,
  invalid: InvalidWriteOutcomeError,
  count: number,
): WriteFacts {
  const joined =
    error === undefined
      ? invalid
      : new AggregateError([error, invalid], `${describeError(error)}\n${invalid.message}`);
  return { outcome: { accepted: 0, uncertain: count > 0 }, error: joined };
}

/** Runs `work`, reporting a failure as a {@link MiddlewareError} of `step`. */
function inStep<T>(step: MiddlewareStep, work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw new MiddlewareError(step, error);
  }
}

function isSystem(message: Message): boolean {
  return message.role === "system";
}
