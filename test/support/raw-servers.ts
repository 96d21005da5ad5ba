/**
 * Servers on 127.0.0.1 that misbehave below what a scripted reply can say: one that sends its
 * headers and then a byte at a time, one that never answers, and one that redirects. HTTP/1.1
 * for OpenAI's client, or cleartext HTTP/2 for Bedrock's.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import {
  createServer as createHttp2Server,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
} from "node:http2";
import type { Socket } from "node:net";

/** The response parts {@link trickle} writes: common to node:http and node:http2. */
interface RawResponse {
  writeHead(status: number, headers: Record<string, string>): unknown;
  write(chunk: string): unknown;
  on(event: "close", listener: () => void): unknown;
}

export interface RawServer {
  url: string;
  /** Every request received: method, path and body. */
  requests: { method: string; path: string; body: string }[];
  close(): Promise<void>;
}

/** What {@link recording} reads of a request: node:http's and node:http2's both have it. */
interface RecordedRequest {
  method?: string;
  url?: string;
  on(event: "data", listener: (chunk: Buffer) => void): unknown;
  on(event: "end", listener: () => void): unknown;
}

/** The request listener both servers share: reads the body, records the request, hands it on. */
function recording<Request extends RecordedRequest, Response>(
  requests: RawServer["requests"],
  handle: (request: Request, response: Response, body: string) => void,
) {
  return (request: Request, response: Response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      requests.push({ method: request.method ?? "", path: request.url ?? "", body });
      handle(request, response, body);
    });
  };
}

/** Listens on a free port of 127.0.0.1; closing first destroys what `open` still holds. */
async function listening(
  server: Server | Http2Server,
  requests: RawServer["requests"],
  open: Set<{ destroy(): void }>,
): Promise<RawServer> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      for (const connection of open) connection.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A server that answers every request with `handle`, recording it first. */
export async function startRawServer(
  handle: (request: IncomingMessage, response: ServerResponse, body: string) => void,
): Promise<RawServer> {
  const requests: RawServer["requests"] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer(recording(requests, handle));
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return listening(server, requests, sockets);
}

/**
 * A cleartext HTTP/2 server (Bedrock's client speaks HTTP/2) that answers every request with
 * `handle` after recording it: a Bedrock client's `endpoint` is its `url`.
 */
export async function startRawHttp2Server(
  handle: (request: unknown, response: RawResponse, body: string) => void,
): Promise<RawServer> {
  const requests: RawServer["requests"] = [];
  const sessions = new Set<Http2Session>();
  const server = createHttp2Server(
    recording<Http2ServerRequest, Http2ServerResponse>(requests, handle),
  );
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  return listening(server, requests, sessions);
}

/** Headers of a JSON reply at once, then one space every `everyMs`, for ever. */
export function trickle(everyMs: number) {
  return (_request: unknown, response: RawResponse) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.write("{");
    const timer = setInterval(() => response.write(" "), everyMs);
    response.on("close", () => clearInterval(timer));
  };
}

/** Never answers (the connection stays open until the server closes). */
export function silent() {
  return () => {};
}
