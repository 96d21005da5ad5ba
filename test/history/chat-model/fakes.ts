import type {
  ChatModel,
  ChatRequest,
  ChatResponse,
  ChatStreamer,
  ModelCallOptions,
  ResponseDelta,
} from "convoseg/chat-model";
import {
  type CallOptions,
  cloneMessage,
  MemoryStore,
  type Message,
  type Store,
  textMessage,
  WriteError,
  type WriteOutcome,
} from "convoseg/history";

/**
 * A MemoryStore that records every call and can fail on demand. With `writeError`, a write first
 * stores the `outcome.accepted` prefix for real, so that the outcome it reports is true, then
 * rejects with a WriteError; `outcome` without `writeError` is returned as a (possibly lying)
 * success without storing anything; `stored` replaces what reads return.
 */
export class RecordingStore implements Store {
  readonly memory = new MemoryStore();
  reads = 0;
  readonly writes: Message[][] = [];
  readError: unknown;
  writeError: unknown;
  outcome: WriteOutcome | undefined;
  stored: Message[] | undefined;

  async read(conversationId: string, options?: CallOptions): Promise<Message[]> {
    this.reads++;
    if (this.readError !== undefined) throw this.readError;
    return this.stored ?? this.memory.read(conversationId, options);
  }

  async write(
    conversationId: string,
    messages: readonly Message[],
    options?: CallOptions,
  ): Promise<WriteOutcome> {
    this.writes.push(messages.map(cloneMessage));
    if (this.writeError !== undefined) {
      const outcome = this.outcome ?? { accepted: 0, uncertain: false };
      await this.memory.write(conversationId, messages.slice(0, outcome.accepted), options);
      throw new WriteError(outcome, this.writeError);
    }
    if (this.outcome !== undefined) return this.outcome;
    return this.memory.write(conversationId, messages, options);
  }

  clear(conversationId: string, options?: CallOptions): Promise<void> {
    return this.memory.clear(conversationId, options);
  }

  get calls(): number {
    return this.reads + this.writes.length;
  }
}

/** A model that records what it was called with and answers with `answer`. */
export class FakeModel implements ChatModel {
  readonly requests: ChatRequest[] = [];

  constructor(private readonly answer: () => Promise<ChatResponse>) {}

  call(request: ChatRequest, _options?: ModelCallOptions): Promise<ChatResponse> {
    this.requests.push(request);
    return this.answer();
  }
}

/**
 * A streaming model that yields `deltas`, then throws `failure` if given; it counts the streams
 * it started and closed (its cleanup runs however iteration ends).
 */
export class FakeStreamer implements ChatStreamer {
  readonly requests: ChatRequest[] = [];
  started = 0;
  closed = 0;

  constructor(
    private readonly deltas: ResponseDelta[],
    private readonly failure?: unknown,
  ) {}

  stream(request: ChatRequest, _options?: ModelCallOptions): AsyncIterable<ResponseDelta> {
    this.requests.push(request);
    return this.generate();
  }

  private async *generate(): AsyncGenerator<ResponseDelta> {
    this.started++;
    try {
      yield* this.deltas;
      if (this.failure !== undefined) throw this.failure;
    } finally {
      this.closed++;
    }
  }
}

/** A streamer whose `stream` returns nothing, as a broken adapter might. */
export const nilStreamer: ChatStreamer = {
  stream: () => null as unknown as AsyncIterable<ResponseDelta>,
};

export function answer(text: string): ChatResponse {
  return { message: textMessage("assistant", text), finishReason: "stop" };
}

export function chunk(text: string): ResponseDelta {
  return { parts: [{ type: "text", text }] };
}

export function userRequest(text: string): ChatRequest {
  return { messages: [textMessage("user", text)] };
}

/**
 * Iterates `stream` to the end, calling `next` again after an error until the iterator reports
 * done, so a stream that fails more than once is caught.
 */
export async function drain(
  stream: AsyncIterable<ResponseDelta>,
): Promise<{ deltas: ResponseDelta[]; errors: unknown[] }> {
  const iterator = stream[Symbol.asyncIterator]();
  const deltas: ResponseDelta[] = [];
  const errors: unknown[] = [];
  for (let step = 0; step < 100; step++) {
    try {
      const result = await iterator.next();
      if (result.done) break;
      deltas.push(result.value);
    } catch (error) {
      errors.push(error);
    }
  }
  return { deltas, errors };
}

/** The one error `stream` ends with. */
export async function streamError(stream: AsyncIterable<ResponseDelta>): Promise<unknown> {
  const { errors } = await drain(stream);
  if (errors.length !== 1) throw new Error(`expected one stream error, got ${errors.length}`);
  return errors[0];
}
