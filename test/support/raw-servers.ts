/**
 * Servers on 127.0.0.1 that misbehave below what a scripted reply can say: one that sends its
 * headers and then a byte at a time, one that never answers, and one that redirects.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

export interface RawServer {
  url: string;
  /** Every request received: method, path and body. */
  requests: { method: string; path: string; body: string }[];
  close(): Promise<void>;
}

/** A server that answers every request with `handle`, recording it first. */
export async function startRawServer(
  handle: (request: IncomingMessage, response: ServerResponse, body: string) => void,
): Promise<RawServer> {
  const requests: RawServer["requests"] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      requests.push({ method: request.method ?? "", path: request.url ?? "", body });
      handle(request, response, body);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Headers of a JSON reply at once, then one space every `everyMs`, for ever. */
export function trickle(everyMs: number) {
  return (_request: IncomingMessage, response: ServerResponse) => {
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
