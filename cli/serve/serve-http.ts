/**
 * The read API's handler over node:http, for `npm start -- serve`: the request as the handler
 * takes it (raw path and query, lower-case headers), its response written back. No auth: the
 * server is for the machine it runs on (cli/serve/serve.ts binds loopback unless told otherwise).
 * Logs the route, status and time of each request, never its path or query (they may carry text).
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ApiHandler } from "convoseg/api";

export interface ApiServer {
  /** `http://host:port`, the port the OS gave when 0 was asked for. */
  readonly url: string;
  close(): Promise<void>;
}

export interface ApiServerOptions {
  handler: ApiHandler;
  host: string;
  port: number;
  /**
   * Answer whatever `Host` a request names. Off (the default), only a loopback name with the
   * server's port is answered: a web page whose own name an attacker rebinds to 127.0.0.1 (DNS
   * rebinding) is the browser's same origin, and would read the workspace otherwise.
   */
  anyHost?: boolean;
  /** One line per request: route, status, milliseconds. */
  log?: (line: string) => void;
}

export async function startApiServer(options: ApiServerOptions): Promise<ApiServer> {
  const server: Server = createServer((request, response) => {
    const started = performance.now();
    if (
      !options.anyHost &&
      !isLocalHost(request.headers.host, (server.address() as AddressInfo).port)
    ) {
      response.writeHead(421, { "content-type": "application/json; charset=utf-8" }).end(
        JSON.stringify({
          error: {
            code: "API_MISDIRECTED",
            message:
              "this server answers requests for this machine only (Host localhost or a loopback address, with its port)",
          },
        }),
      );
      options.log?.(`421 not a loopback Host`);
      return;
    }
    void answer(options.handler, request).then(
      ({ status, headers, body, route }) => {
        response.writeHead(status, headers).end(body);
        options.log?.(`${route} ${status} ${Math.round(performance.now() - started)} ms`);
      },
      (error: Error) => {
        response
          .writeHead(500, { "content-type": "application/json; charset=utf-8" })
          .end(JSON.stringify({ error: { code: "API_INTERNAL", message: "internal error" } }));
        // The error's name and code only: a message may quote an item.
        options.log?.(`500 ${error.name} ${(error as { code?: string }).code ?? ""}`.trim());
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(":") ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function answer(handler: ApiHandler, request: IncomingMessage) {
  const url = request.url ?? "/";
  const at = url.indexOf("?");
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return readBody(request).then((body) =>
    handler({
      method: request.method ?? "GET",
      rawPath: at < 0 ? url : url.slice(0, at),
      rawQuery: at < 0 ? "" : url.slice(at + 1),
      headers,
      ...(body !== undefined && { body }),
    }),
  );
}

/** The bytes a body is read to: past them the handler sees a body too large, and says so. */
const MAX_BODY_BYTES = 8192;

/** A POST's body (the write routes'), at most {@link MAX_BODY_BYTES} of it; others' are drained. */
function readBody(request: IncomingMessage): Promise<string | undefined> {
  if (request.method !== "POST") {
    request.resume();
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      size += chunk.length;
    });
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

/** Whether `host` names this machine only: 127.0.0.0/8, ::1 or localhost. */
export function isLoopback(host: string): boolean {
  return (
    host === "localhost" ||
    host === "::1" ||
    host === "[::1]" ||
    /^127(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(host)
  );
}

/** A `Host` header naming this machine and `port` (`localhost:8787`, `[::1]:8787`). */
function isLocalHost(header: string | undefined, port: number): boolean {
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(header?.toLowerCase() ?? "");
  if (match === null) return false;
  const [, name, given] = match;
  return isLoopback(name as string) && Number(given ?? 80) === port;
}
