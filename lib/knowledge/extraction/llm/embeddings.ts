/**
 * The embeddings adapters behind `lib/knowledge/topics`' `Embedder` port, for the topic matcher: Amazon
 * Titan Text Embeddings on Bedrock (`InvokeModel`, one text a call) and OpenAI-compatible
 * `/embeddings` (a batch a call). Replies are validated: a vector is finite numbers, of one length
 * per reply, one per text; anything else is an {@link InvalidModelOutputError}. Retries are the
 * SDKs' (throttling, 5xx, timeouts); other statuses fail at once.
 */
import { BedrockRuntimeClient, InvokeModelCommand } from "@aws-sdk/client-bedrock-runtime";
import OpenAI, { APIError } from "openai";
import { z } from "zod";
import { isTransient, isTransientStatus } from "../../../base/transient/index.js";
import { DEFAULT_TITAN_EMBEDDINGS_MODEL, type Embedder } from "../../topics/index.js";
import { InvalidModelOutputError, LLMError } from "../errors.js";
import { authHint, nonEmptyString, positiveInteger } from "./options.js";
import { redirectSafeFetch } from "./redirects.js";

/** The longest text sent (topics are short; a longer one is cut, never refused). */
const MAX_TEXT_CHARS = 512;
/** The most dimensions a reply may have: bounds what a hostile endpoint can make us hold. */
const MAX_DIMENSIONS = 8192;

const vector = z.array(z.number().finite()).min(1).max(MAX_DIMENSIONS);
const titanReply = z.object({ embedding: vector });
const openAIReply = z.object({
  data: z.array(z.object({ index: z.number().int().min(0), embedding: vector })),
});

export interface BedrockTitanEmbedderOptions {
  /** Default {@link DEFAULT_TITAN_EMBEDDINGS_MODEL}. */
  modelId?: string;
  /** Titan v2's `dimensions` (256, 512 or 1024); not sent when absent (v1 takes none). */
  dimensions?: 256 | 512 | 1024;
  /** Texts embedded at once (one call each). Default 4. */
  concurrency?: number;
  /** Default `new BedrockRuntimeClient({})`: region, credentials and retries from the environment. */
  client?: BedrockRuntimeClient;
}

/** Titan Text Embeddings on Bedrock. */
export class BedrockTitanEmbedder implements Embedder {
  readonly model: string;
  readonly #dimensions: number | undefined;
  readonly #concurrency: number;
  readonly #client: BedrockRuntimeClient;

  /** Throws a RangeError naming an option out of range. */
  constructor(options: BedrockTitanEmbedderOptions = {}) {
    this.model = nonEmptyString("modelId", options.modelId ?? DEFAULT_TITAN_EMBEDDINGS_MODEL);
    if (options.dimensions !== undefined && ![256, 512, 1024].includes(options.dimensions)) {
      throw new RangeError(`dimensions must be 256, 512 or 1024 (got ${options.dimensions})`);
    }
    this.#dimensions = options.dimensions;
    this.#concurrency = positiveInteger("concurrency", options.concurrency ?? 4);
    this.#client = options.client ?? new BedrockRuntimeClient({});
  }

  async embed(texts: readonly string[], options: { signal?: AbortSignal } = {}) {
    const out: number[][] = new Array(texts.length);
    let next = 0;
    const worker = async () => {
      while (next < texts.length) {
        const i = next++;
        out[i] = await this.#one(texts[i], options.signal);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#concurrency, texts.length) }, worker));
    return out;
  }

  async #one(text: string, signal: AbortSignal | undefined): Promise<number[]> {
    const body: Record<string, unknown> = { inputText: text.slice(0, MAX_TEXT_CHARS) };
    if (this.#dimensions !== undefined) Object.assign(body, { dimensions: this.#dimensions });
    let raw: string;
    try {
      const reply = await this.#client.send(
        new InvokeModelCommand({
          modelId: this.model,
          contentType: "application/json",
          accept: "application/json",
          body: JSON.stringify(body),
        }),
        { abortSignal: signal },
      );
      raw = new TextDecoder().decode(reply.body);
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata
        ?.httpStatusCode;
      const retryable = isTransient(error);
      const what = (error as Error).name ?? "Error";
      throw new LLMError(
        `bedrock embeddings (${this.model}): ${what}${retryable ? "" : ` (not retryable${authHint(status)})`}`,
        retryable,
        status,
        { cause: error },
      );
    }
    return parsed(titanReply, raw, `bedrock embeddings (${this.model})`).embedding;
  }
}

export interface OpenAIEmbedderOptions {
  /** The model name (required). */
  model: string;
  /** The API's base URL, version path included. Default the SDK's (`OPENAI_BASE_URL` or OpenAI's). */
  baseURL?: string;
  /** Default `OPENAI_API_KEY`; one of the two is required. */
  apiKey?: string | (() => Promise<string>);
  /** SDK retries of 408, 409, 429, 5xx and timeouts. Default 3. */
  maxRetries?: number;
  /** Milliseconds per request. Default 30000. */
  timeoutMs?: number;
  /** The client to send with (default one made from the options above). */
  client?: OpenAI;
}

/** An OpenAI-compatible `/embeddings` endpoint. */
export class OpenAIEmbedder implements Embedder {
  readonly model: string;
  readonly #client: OpenAI;

  constructor(options: OpenAIEmbedderOptions) {
    this.model = nonEmptyString("model", options.model);
    if (options.client === undefined && !options.apiKey && !process.env.OPENAI_API_KEY) {
      throw new RangeError("apiKey must be given when OPENAI_API_KEY is not set");
    }
    this.#client =
      options.client ??
      new OpenAI({
        baseURL: options.baseURL,
        apiKey: options.apiKey,
        maxRetries: options.maxRetries ?? 3,
        timeout: positiveInteger("timeoutMs", options.timeoutMs ?? 30_000),
        fetch: redirectSafeFetch(),
      });
  }

  async embed(texts: readonly string[], options: { signal?: AbortSignal } = {}) {
    if (texts.length === 0) return [];
    const where = `embeddings (${this.model} at ${this.#client.baseURL})`;
    let reply: unknown;
    try {
      reply = await this.#client.embeddings.create(
        {
          model: this.model,
          input: texts.map((t) => t.slice(0, MAX_TEXT_CHARS)),
          encoding_format: "float",
        },
        { signal: options.signal },
      );
    } catch (error) {
      const status = error instanceof APIError ? error.status : undefined;
      const retryable = status === undefined ? isTransient(error) : isTransientStatus(status);
      const what = status === undefined ? (error as Error).name : `status ${status}`;
      throw new LLMError(
        `${where}: ${what}${retryable ? "" : ` (not retryable${authHint(status)})`}`,
        retryable,
        status,
        { cause: error },
      );
    }
    const { data } = parsed(openAIReply, reply, where);
    const byIndex = new Map(data.map((d) => [d.index, d.embedding]));
    const out = texts.map((_, i) => byIndex.get(i));
    if (data.length !== texts.length || out.some((v) => v === undefined)) {
      const got = `${data.length} vectors for ${texts.length} texts`;
      throw new InvalidModelOutputError(`${where}: the reply has ${got}`, "");
    }
    const vectors = out as number[][];
    if (vectors.some((v) => v.length !== vectors[0].length)) {
      throw new InvalidModelOutputError(`${where}: the reply's vectors differ in length`, "");
    }
    return vectors;
  }
}

/** `raw` (JSON text or a parsed body) as `schema` says, or an InvalidModelOutputError. */
function parsed<T>(schema: z.ZodType<T>, raw: unknown, where: string): T {
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new InvalidModelOutputError(`${where}: the reply is not JSON`, "");
    }
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    const at = result.error.issues[0]?.path.join(".") || "(root)";
    throw new InvalidModelOutputError(`${where}: the reply is not embeddings (at ${at})`, "");
  }
  return result.data;
}
