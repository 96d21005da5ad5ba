import {
  InvalidMessageError,
  type Message,
  type Metadata,
  type Part,
  validateMessage,
} from "../index.js";

/**
 * The provider-neutral chat model contract that the history middleware wraps: the port of the
 * pieces of the original's `chat` package it relies on. A model adapter implements
 * {@link ChatModel} or {@link ChatStreamer}; the middleware decorates either one.
 */

/** A tool the model may call. */
interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON schema of the arguments. */
  parameters?: Metadata;
}

export interface ChatRequest {
  messages: Message[];
  tools?: ToolDefinition[];
  /** "auto", "none", "required", or the name of one of `tools`. */
  toolChoice?: string;
  /** Provider options passed through untouched. */
  options?: Metadata;
}

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
}

export interface ChatResponse {
  message: Message;
  finishReason?: string;
  usage?: Usage;
}

/** One chunk of a streamed response. */
export interface ResponseDelta {
  parts?: Part[];
  finishReason?: string;
  usage?: Usage;
}

/**
 * Options of one model call. `conversationId` binds the call to a stored history; absent or empty
 * means unbound, and the history middleware then passes the call through untouched.
 */
export interface ModelCallOptions {
  conversationId?: string;
  signal?: AbortSignal;
}

export interface ChatModel {
  call(request: ChatRequest, options?: ModelCallOptions): Promise<ChatResponse>;
}

export interface ChatStreamer {
  stream(request: ChatRequest, options?: ModelCallOptions): AsyncIterable<ResponseDelta>;
}

/** Tool choices that name no tool. */
const GENERIC_TOOL_CHOICES = ["auto", "none", "required"];

/**
 * Throws an {@link InvalidMessageError} naming the first field at fault, so a malformed request
 * never reaches a provider: at least one message, each valid, system messages only as a leading
 * prefix (providers disagree on anything else), unique non-empty tool names, a tool choice that
 * names a defined tool or a generic choice, and object-valued options.
 */
export function validateRequest(request: unknown): asserts request is ChatRequest {
  if (!isObject(request)) throw new InvalidMessageError("request", "expected an object");
  const { messages, tools, toolChoice, options } = request as Partial<ChatRequest>;
  validateMessages(messages);
  const toolNames = validateTools(tools);
  if (toolChoice !== undefined && !isKnownToolChoice(toolChoice, toolNames)) {
    throw new InvalidMessageError("toolChoice", "expected auto, none, required or a defined tool");
  }
  if (options !== undefined && !isObject(options)) {
    throw new InvalidMessageError("options", "expected an object");
  }
}

function validateMessages(messages: unknown): asserts messages is Message[] {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new InvalidMessageError("messages", "a request needs at least one message");
  }
  let seenNonSystem = false;
  messages.forEach((message: unknown, i) => {
    withField(`messages[${i}]`, () => validateMessage(message));
    if ((message as Message).role !== "system") seenNonSystem = true;
    else if (seenNonSystem) {
      throw new InvalidMessageError(
        `messages[${i}].role`,
        "system messages only as a leading prefix",
      );
    }
  });
}

/** The names of the valid tool list `tools`. */
function validateTools(tools: unknown): Set<string> {
  const names = new Set<string>();
  if (tools === undefined) return names;
  if (!Array.isArray(tools)) throw new InvalidMessageError("tools", "expected an array");
  tools.forEach((tool: unknown, i) => {
    const name = isObject(tool) ? (tool as Partial<ToolDefinition>).name : undefined;
    if (typeof name !== "string" || name === "") {
      throw new InvalidMessageError(`tools[${i}].name`, "expected a non-empty string");
    }
    if (names.has(name)) throw new InvalidMessageError(`tools[${i}].name`, "duplicate tool name");
    names.add(name);
  });
  return names;
}

function isKnownToolChoice(choice: unknown, toolNames: Set<string>): boolean {
  return (
    typeof choice === "string" && (GENERIC_TOOL_CHOICES.includes(choice) || toolNames.has(choice))
  );
}

function isObject(value: unknown): value is object {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Runs `check`, prefixing the field of an {@link InvalidMessageError} it throws with `prefix`. */
function withField(prefix: string, check: () => void): void {
  try {
    check();
  } catch (error) {
    if (error instanceof InvalidMessageError) {
      throw new InvalidMessageError(`${prefix}.${error.field}`, error.reason);
    }
    throw error;
  }
}

/** An independent deep copy of a request. */
export function cloneRequest(request: ChatRequest): ChatRequest {
  return structuredClone(request);
}

/**
 * Folds a streamed response back into one {@link ChatResponse}, so that a streamed answer can be
 * persisted like a called one. Consecutive text parts become one text part (providers stream
 * text a few characters at a time); every other part is kept as sent. The parts are copied, so
 * a provider that reuses its delta objects cannot change what was accumulated.
 */
export class StreamAccumulator {
  private readonly parts: Part[] = [];
  private finishReason: string | undefined;
  private usage: Usage | undefined;

  /** Throws an {@link InvalidMessageError} for a delta that carries nothing or invalid parts. */
  add(delta: ResponseDelta): void {
    const parts = delta?.parts ?? [];
    if (parts.length === 0 && delta?.finishReason === undefined && delta?.usage === undefined) {
      throw new InvalidMessageError("delta", "a delta needs parts, a finish reason or usage");
    }
    if (parts.length > 0) {
      withField("delta", () => validateMessage({ role: "assistant", parts }));
    }
    for (const part of structuredClone(parts)) this.append(part);
    this.finishReason = delta.finishReason ?? this.finishReason;
    this.usage = delta.usage ? { ...delta.usage } : this.usage;
  }

  /** The response so far, detached; throws when no part was streamed, as there is no message. */
  response(): ChatResponse {
    if (this.parts.length === 0) {
      throw new InvalidMessageError("parts", "the stream produced no message part");
    }
    return structuredClone({
      message: { role: "assistant", parts: this.parts },
      ...(this.finishReason !== undefined && { finishReason: this.finishReason }),
      ...(this.usage !== undefined && { usage: this.usage }),
    });
  }

  private append(part: Part): void {
    const last = this.parts.at(-1);
    if (last?.type !== "text" || part.type !== "text") {
      this.parts.push(part);
      return;
    }
    last.text += part.text;
    if (part.metadata) last.metadata = { ...last.metadata, ...part.metadata };
  }
}
