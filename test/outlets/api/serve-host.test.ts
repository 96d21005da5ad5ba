/**
 * `serve` answers requests for this machine only: a web page whose name an attacker rebinds to
 * 127.0.0.1 (DNS rebinding) sends its own name as `Host`, and is refused; `--allow-remote` lifts
 * the check. Over real HTTP on 127.0.0.1 (node:http, as `fetch` may not set `Host`).
 */
import { request } from "node:http";
import { apiHandler, memoryApiSources } from "convoseg/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiServer, startApiServer } from "../../../cli/serve/serve-http.js";

let local: ApiServer;
let open: ApiServer;
const logged: string[] = [];

beforeAll(async () => {
  const handler = apiHandler(memoryApiSources({ channels: ["help"] }));
  local = await startApiServer({
    handler,
    host: "127.0.0.1",
    port: 0,
    log: (line) => logged.push(line),
  });
  open = await startApiServer({ handler, host: "127.0.0.1", port: 0, anyHost: true });
});

afterAll(async () => {
  await local?.close();
  await open?.close();
});

/** GET `path` from `server` naming `host` in the Host header. */
function get(server: ApiServer, host: string, path = "/channels") {
  const { port } = new URL(server.url);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { host } }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        body += chunk;
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("serve's Host check", () => {
  it("answers this machine's names with the server's port", async () => {
    const { port } = new URL(local.url);
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST:${port}`,
      `127.9.9.9:${port}`,
    ]) {
      expect((await get(local, host)).status, host).toBe(200);
    }
  });

  it("refuses another name or another port with 421, and no data", async () => {
    const { port } = new URL(local.url);
    for (const host of [
      `evil.example:${port}`,
      `localhost.evil.example:${port}`,
      "localhost",
      `127.0.0.1:${Number(port) + 1}`,
      `[::1]:${Number(port) + 1}`,
    ]) {
      const response = await get(local, host);
      expect(response.status, host).toBe(421);
      expect(JSON.parse(response.body)).toEqual({
        error: {
          code: "API_MISDIRECTED",
          message:
            "this server answers requests for this machine only (Host localhost or a loopback address, with its port)",
        },
      });
      expect(response.body).not.toContain("help");
    }
    expect(logged).toContain("421 not a loopback Host");
  });

  it("answers any Host when told to (--allow-remote)", async () => {
    const { port } = new URL(open.url);
    expect((await get(open, `evil.example:${port}`)).status).toBe(200);
  });
});
