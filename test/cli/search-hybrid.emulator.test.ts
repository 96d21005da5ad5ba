/**
 * `search --embeddings` on a local workspace, the model a scripted OpenAI-compatible server (the
 * bench's hashing model): the index is built with vectors once, built again for another model,
 * and a model that fails leaves the index as it was and names itself.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { describe, expect, it, vi } from "vitest";
import { hashingEmbedding } from "../../bench/search/embed-server.js";
import { mcpServer } from "../../cli/mcp.js";
import { serveWorkspace } from "../../cli/serve/serve.js";
import { parseEmbedder } from "../../cli/topics/embedding-options.js";
import { openWorkspace } from "../../local/workspace.js";
import { runCli } from "../support/cli.js";
import {
  closedAfterEach,
  type RecordedRequest,
  startEmbeddingsServer,
} from "../support/llm-servers.js";
import { sampleRun } from "../support/workspace-run.js";

const cli = (args: string[]) => runCli(args, Date.UTC(2100, 0, 1));
const embeddings = closedAfterEach(startEmbeddingsServer);

const hashing = (request: RecordedRequest) => {
  const { input } = request.body as { input: string[] };
  return {
    body: { data: input.map((text, index) => ({ index, embedding: hashingEmbedding(text) })) },
  };
};
const texts = (requests: RecordedRequest[]) =>
  requests.reduce((n, r) => n + (r.body as { input: string[] }).input.length, 0);

describe("search --embeddings", () => {
  it("builds the index with vectors once per model, ranks hybrid, and fails cleanly", async () => {
    const { dir, ws, chat } = await sampleRun(
      "search-hybrid",
      { seed: 12, channels: ["desk"], perChannel: 30 },
      cli,
    );
    const server = await embeddings(hashing);
    vi.stubEnv("OPENAI_API_KEY", "test");
    const model = (name: string, url = server.url) => [
      "--embeddings",
      `openai:${name}`,
      "--embeddings-url",
      `${url}/v1`,
    ];
    const word = String(chat.find((m) => String(m.text).length > 20)?.text)
      .split(/[^\p{L}]+/u)
      .filter((w) => w.length > 4)[0] as string;

    const first = await cli(["search", word, "--json", ...model("hashing"), ...ws]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain("with hashing's embeddings");
    const indexed =
      /indexed ([\d,]+) documents in [\d.]+ s, ([\d,]+) texts embedded \(0 from the cache\)/.exec(
        first.stderr,
      );
    expect(indexed, first.stderr).not.toBeNull();
    // Every text once, and the query.
    expect(texts(server.requests)).toBe(Number(indexed?.[2]?.replaceAll(",", "")) + 1);
    // Hybrid fills the page: the words' hits and the nearest documents.
    expect(first.stdout.trim().split("\n").length).toBeGreaterThan(1);

    // Built with this model: the next search only embeds its query, and one without embeddings
    // uses the same index by its words.
    const asked = server.requests.length;
    const again = await cli(["search", word, "--json", ...model("hashing"), ...ws]);
    expect(again.stderr).not.toContain("indexed");
    expect(server.requests.length).toBe(asked + 1);
    const plain = await cli(["search", word, "--json", ...ws]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).not.toContain("indexed");

    // Another model builds it again, all texts anew; a failing one fails, naming itself.
    const other = await cli(["search", word, ...model("other"), ...ws]);
    expect(other.stderr).toMatch(/texts embedded \(0 from the cache\)/);
    const broken = await embeddings(() => ({ status: 400, body: { error: { message: "no" } } }));
    const failed = await cli(["search", word, ...model("broken", broken.url), ...ws]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      /search: embedding [\d,]+ texts of [\d,]+ documents with broken failed: embeddings \(broken at .*\): status 400/,
    );
    expect(failed.stderr).not.toContain("SearchError");
    const kept = await cli(["search", word, ...model("other"), ...ws]);
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.stderr).not.toContain("indexed");
    expect(existsSync(join(dir, "search", "vectors.lance"))).toBe(true);

    const bad = await cli(["search", word, "--embeddings-url", `${server.url}/v1`, ...ws]);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining("--embeddings-url needs")]);
    const unknown = await cli(["search", word, "--embeddings", "cohere", ...ws]);
    expect(unknown.stderr).toContain("--embeddings must be bedrock, bedrock:MODEL or openai:MODEL");
  }, 420_000);

  it("ranks hybrid in serve's GET /search and mcp's search tool, with the model they are given", async () => {
    const { dir, chat } = await sampleRun(
      "search-served",
      { seed: 13, channels: ["desk"], perChannel: 20 },
      cli,
    );
    const server = await embeddings(hashing);
    vi.stubEnv("OPENAI_API_KEY", "test");
    const embedder = parseEmbedder({
      embeddings: "openai:hashing",
      "embeddings-url": `${server.url}/v1`,
    });
    const word = String(chat.find((m) => String(m.text).length > 20)?.text)
      .split(/[^\p{L}]+/u)
      .filter((w) => w.length > 4)[0] as string;
    const workspace = await openWorkspace({ dir, create: false, note: () => {} });
    try {
      const api = await serveWorkspace(workspace, { host: "127.0.0.1", port: 0, embedder });
      try {
        const response = await fetch(`${api.url}/search?q=${encodeURIComponent(word)}&limit=50`);
        expect(response.status).toBe(200);
        const { hits } = (await response.json()) as { hits: { score: number }[] };
        expect(hits.length).toBeGreaterThan(1);
        // Fused by reciprocal rank: every score is a sum of 1 / (60 + rank), under 2 / 61.
        for (const hit of hits) expect(hit.score).toBeLessThan(2 / 61 + 1e-9);
      } finally {
        await api.close();
      }
      const built = texts(server.requests);
      // Every document embedded once by the index's build, and the query.
      expect(built).toBeGreaterThan(chat.length / 2);
      const tools = mcpServer(
        workspace,
        {
          stdin: process.stdin,
          stdout: { write: () => true },
          stderr: { write: () => true },
          now: Date.now,
        },
        { embedder },
      );
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await tools.connect(serverSide);
      const client = new Client({ name: "test", version: "1" });
      await client.connect(clientSide);
      const result = await client.callTool({ name: "search", arguments: { query: word } });
      const hits = JSON.parse(
        (result as { content: { text: string }[] }).content[0]?.text ?? "[]",
      ) as { score: number }[];
      expect(hits.length).toBeGreaterThan(1);
      for (const hit of hits) expect(hit.score).toBeLessThan(2 / 61 + 1e-9);
      // The index was built with the model already: only the query was embedded.
      expect(texts(server.requests)).toBe(built + 1);
      await client.close();
    } finally {
      await workspace.close();
    }
  }, 420_000);
});
