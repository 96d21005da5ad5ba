/**
 * `search --embeddings` on a local workspace, the model a scripted OpenAI-compatible server (the
 * bench's hashing model): the index is built with vectors once, built again for another model,
 * and a model that fails leaves the index as it was and names itself.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { hashingEmbedding } from "../../bench/search/embed-server.js";
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
});
