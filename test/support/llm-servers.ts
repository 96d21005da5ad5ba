/**
 * Scripted stand-ins for the model providers, on 127.0.0.1 and a free port: a cleartext HTTP/2
 * server answering Bedrock's Converse (the Bedrock client speaks HTTP/2) and an HTTP/1.1 server
 * answering OpenAI's chat completions; and, by the same means, an HTTP/1.1 server answering
 * Lambda's Invoke, which the fan-out dispatcher calls. Each answers its route with the scripted
 * responses in order and records every request, so tests see what went on the wire and how often.
 */
import { createServer as createHttp1Server } from "node:http";
import { createServer as createHttp2Server, type Http2Session } from "node:http2";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import type { PromptTurn } from "convoseg/extraction";
import { afterEach } from "vitest";

/** One scripted answer. */
export interface ScriptedResponse {
  /** Default 200. */
  status?: number;
  headers?: Record<string, string>;
  /** Sent as JSON, a string as it is. */
  body?: unknown;
  /** Milliseconds to wait before answering; a client that goes away meanwhile gets nothing. */
  delayMs?: number;
}

/** Answers each request on the route from what it asked: the `index`-th such request, from 0. */
type Responder = (request: RecordedRequest, index: number) => ScriptedResponse;

/** The answers in order, or a responder that computes each. */
export type Script = readonly ScriptedResponse[] | Responder;

/** A request as the server got it. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The body parsed as JSON, or its text when it is not JSON. */
  body: unknown;
  /** `performance.now()` when the whole body had arrived. */
  receivedAt: number;
  /** Set when the client went away before the answer was sent. */
  abandoned: boolean;
}

export interface ScriptedServer {
  /** The origin, `http://127.0.0.1:<port>`. */
  url: string;
  /** Every request, in arrival order, also those off the route. */
  requests: RecordedRequest[];
  /** Stops the server, dropping connections and unanswered delayed responses. */
  close(): Promise<void>;
}

/** The request parts the handler reads: common to node:http and node:http2 (compatibility API). */
interface ServerRequest extends AsyncIterable<Buffer> {
  method?: string;
  url?: string;
  headers: Record<string, string | string[] | undefined>;
}

/** The response parts the handler writes, common to both servers. */
interface ServerResponse {
  writeHead(status: number, headers: Record<string, string>): unknown;
  end(body: string): unknown;
  once(event: "close", listener: () => void): unknown;
}

/** The answers off the route and past the end of the script: statuses no client retries. */
const NO_ROUTE: ScriptedResponse = { status: 404, body: { message: "no such route" } };
const EXHAUSTED: ScriptedResponse = { status: 418, body: { message: "no scripted response left" } };

const CONVERSE_PATH = /^\/model\/[^/]+\/converse$/;

/**
 * A cleartext HTTP/2 server answering `POST /model/{modelId}/converse` with `script`, in order.
 * Point a client at it with {@link testBedrockClient}.
 */
export function startConverseServer(script: Script): Promise<ScriptedServer> {
  return startConverseLike(script, CONVERSE_PATH);
}

/** A cleartext HTTP/2 server, as the Bedrock client speaks, answering POSTs to `path`. */
function startConverseLike(script: Script, path: RegExp): Promise<ScriptedServer> {
  return startScripted(
    script,
    (r) => r.method === "POST" && path.test(r.path),
    (handler) => {
      const server = createHttp2Server(handler);
      const sessions = new Set<Http2Session>();
      server.on("session", (session) => {
        sessions.add(session);
        session.once("close", () => sessions.delete(session));
      });
      return {
        server,
        dropConnections: () => {
          for (const session of sessions) session.destroy();
        },
      };
    },
  );
}

/**
 * An HTTP/1.1 server answering `POST /v1/chat/completions` with `script`, in order: an OpenAI
 * client's `baseURL` is `${url}/v1`.
 */
export function startChatCompletionsServer(script: Script): Promise<ScriptedServer> {
  return startScripted(
    script,
    (r) => r.method === "POST" && r.path === "/v1/chat/completions",
    http1,
  );
}

const INVOKE_MODEL_PATH = /^\/model\/[^/]+\/invoke$/;

/** A cleartext HTTP/2 server answering Bedrock's `POST /model/{modelId}/invoke` with `script`. */
export function startInvokeModelServer(script: Script): Promise<ScriptedServer> {
  return startConverseLike(script, INVOKE_MODEL_PATH);
}

/** An HTTP/1.1 server answering `POST /v1/embeddings` with `script`, in order. */
export function startEmbeddingsServer(script: Script): Promise<ScriptedServer> {
  return startScripted(script, (r) => r.method === "POST" && r.path === "/v1/embeddings", http1);
}

/** An HTTP/1.1 server for `startScripted`. */
function http1(handler: Parameters<typeof createHttp1Server>[0] & object) {
  const server = createHttp1Server(handler);
  return { server, dropConnections: () => server.closeAllConnections() };
}

const INVOKE_PATH = /^\/2015-03-31\/functions\/[^/]+\/invocations$/;

/**
 * An HTTP/1.1 server answering Lambda's `POST /2015-03-31/functions/{name}/invocations` with
 * `script`, in order: a Lambda client's `endpoint` is its `url`.
 */
export function startLambdaInvokeServer(script: Script): Promise<ScriptedServer> {
  return startScripted(script, (r) => r.method === "POST" && INVOKE_PATH.test(r.path), http1);
}

/**
 * `start`, with every server it starts closed after each test (call it at a test file's top
 * level, where it registers the `afterEach`).
 */
export function closedAfterEach(
  start: (script: Script) => Promise<ScriptedServer>,
): (script: Script) => Promise<ScriptedServer> {
  const servers: ScriptedServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  return async (script) => {
    const server = await start(script);
    servers.push(server);
    return server;
  };
}

/**
 * A port on 127.0.0.1 that nothing listens on (it was free a moment ago): a connection to it is
 * refused, as to a model server that is not running.
 */
export async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A schema in the portable subset: every field required, nullable as anyOf with null. */
export const PORTABLE_SCHEMA = {
  type: "object",
  properties: {
    topics: { type: "array", items: { type: "string" } },
    note: { anyOf: [{ type: "string" }, { type: "null" }] },
  },
  required: ["topics", "note"],
  additionalProperties: false,
};

/** A user turn of a prompt, with a cache prefix when one is given. */
export const userTurn = (content: string, cachePrefix?: number): PromptTurn => ({
  role: "user",
  content,
  cachePrefix,
});

/** A Bedrock client for a scripted server: static credentials, and by default no SDK retries. */
export function testBedrockClient(url: string, maxAttempts = 1): BedrockRuntimeClient {
  return new BedrockRuntimeClient({
    endpoint: url,
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
    maxAttempts,
  });
}

/** Token counts of a scripted Converse reply. */
export interface ConverseUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

const CONVERSE_USAGE: ConverseUsage = { inputTokens: 10, outputTokens: 5 };

/** A Converse answer whose message is one text block. */
export function converseText(
  text: string,
  usage: ConverseUsage = CONVERSE_USAGE,
  stopReason = "end_turn",
): ScriptedResponse {
  return converseAnswer([{ text }], usage, stopReason);
}

/** A Converse answer whose message calls tool `name` with `input`. */
export function converseToolUse(
  name: string,
  input: unknown,
  usage: ConverseUsage = CONVERSE_USAGE,
  stopReason = "tool_use",
): ScriptedResponse {
  return converseAnswer([{ toolUse: { toolUseId: "tooluse_1", name, input } }], usage, stopReason);
}

/** A Converse answer with the given content blocks. */
export function converseAnswer(
  content: unknown[],
  usage: ConverseUsage = CONVERSE_USAGE,
  stopReason = "end_turn",
): ScriptedResponse {
  return {
    headers: { "x-amzn-requestid": "test-request" },
    body: {
      output: { message: { role: "assistant", content } },
      stopReason,
      usage: { ...usage, totalTokens: usage.inputTokens + usage.outputTokens },
      metrics: { latencyMs: 1 },
    },
  };
}

/** A Bedrock error as the service sends it: its type in `x-amzn-errortype`, a message body. */
export function converseError(
  status: number,
  errorType: string,
  message = `${errorType} (scripted)`,
): ScriptedResponse {
  return { status, headers: { "x-amzn-errortype": errorType }, body: { message } };
}

/** Token counts of a scripted chat completion, as OpenAI's `usage`. */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
  /** DeepSeek's count of prompt tokens read from its cache. */
  prompt_cache_hit_tokens?: number;
}

/** A chat completion with one choice whose message says `content`. */
export function chatCompletion(
  content: string | null,
  options: { usage?: ChatUsage; finishReason?: string; refusal?: string } = {},
): ScriptedResponse {
  const usage = options.usage ?? { prompt_tokens: 10, completion_tokens: 5 };
  return {
    body: {
      id: "chatcmpl-test",
      object: "chat.completion",
      created: 0,
      model: "test-model",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content, refusal: options.refusal ?? null },
          finish_reason: options.finishReason ?? "stop",
          logprobs: null,
        },
      ],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    },
  };
}

/** An OpenAI-style error answer. */
export function chatError(
  status: number,
  headers: Record<string, string> = {},
  message = `status ${status} (scripted)`,
): ScriptedResponse {
  return { status, headers, body: { error: { message, type: "scripted", code: null } } };
}

/** A server as {@link startScripted} drives it: either node:http or node:http2. */
interface Listener {
  listen(port: number, host: string, callback: () => void): unknown;
  address(): AddressInfo | string | null;
  close(callback: () => void): unknown;
}

/**
 * The scripted server `create` makes around the shared handler, listening on 127.0.0.1; `close`
 * cancels delayed answers and drops the connections (`dropConnections`) before stopping it.
 */
async function startScripted(
  script: Script,
  onRoute: (request: RecordedRequest) => boolean,
  create: (handler: (req: ServerRequest, res: ServerResponse) => Promise<void>) => {
    server: Listener;
    dropConnections: () => void;
  },
): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const { server, dropConnections } = create(scriptedHandler(script, requests, timers, onRoute));
  const url = await listen(server);
  return {
    url,
    requests,
    close: () => {
      for (const timer of timers) clearTimeout(timer);
      dropConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The request handler both servers share: record, then answer from the script (or not at all). */
function scriptedHandler(
  script: Script,
  requests: RecordedRequest[],
  timers: Set<NodeJS.Timeout>,
  onRoute: (request: RecordedRequest) => boolean,
): (req: ServerRequest, res: ServerResponse) => Promise<void> {
  const pending = typeof script === "function" ? [] : [...script];
  let routed = 0;
  const next = (record: RecordedRequest) =>
    typeof script === "function" ? script(record, routed++) : (pending.shift() ?? EXHAUSTED);
  return async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString("utf8");
    const record: RecordedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: { ...req.headers },
      body: parseBody(text),
      receivedAt: performance.now(),
      abandoned: false,
    };
    requests.push(record);
    let answered = false;
    res.once("close", () => {
      if (!answered) record.abandoned = true;
    });
    const reply = onRoute(record) ? next(record) : NO_ROUTE;
    const send = () => {
      if (record.abandoned) return;
      answered = true;
      const body = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body ?? {});
      res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
      res.end(body);
    };
    if (reply.delayMs === undefined) {
      send();
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      send();
    }, reply.delayMs);
    timers.add(timer);
  };
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function listen(server: Listener): Promise<string> {
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve(`http://127.0.0.1:${port}`);
    });
  });
}
