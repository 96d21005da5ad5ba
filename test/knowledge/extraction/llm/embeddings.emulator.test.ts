import { InvalidModelOutputError, LLMError } from "convoseg/extraction";
import { BedrockTitanEmbedder, OpenAIEmbedder } from "convoseg/extraction/llm";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import {
  closedAfterEach,
  startEmbeddingsServer,
  startInvokeModelServer,
  testBedrockClient,
} from "../../../support/llm-servers.js";

const titan = closedAfterEach(startInvokeModelServer);
const embeddings = closedAfterEach(startEmbeddingsServer);

const openAIClient = (url: string, maxRetries = 0) =>
  new OpenAI({ baseURL: `${url}/v1`, apiKey: "test", maxRetries });

describe("BedrockTitanEmbedder on a scripted Bedrock runtime", () => {
  it("asks once per text, in order, with the dimensions, and returns the vectors in order", async () => {
    const server = await titan((request) => {
      const { inputText } = request.body as { inputText: string };
      return { body: { embedding: [inputText.length, 1], inputTextTokenCount: 2 } };
    });
    const embedder = new BedrockTitanEmbedder({
      dimensions: 256,
      concurrency: 2,
      client: testBedrockClient(server.url),
    });
    const vectors = await embedder.embed(["a", "bbb", "cc"]);
    expect(vectors).toEqual([
      [1, 1],
      [3, 1],
      [2, 1],
    ]);
    expect(server.requests).toHaveLength(3);
    expect(server.requests[0].path).toBe(
      `/model/${encodeURIComponent("amazon.titan-embed-text-v2:0")}/invoke`,
    );
    expect(server.requests.map((r) => (r.body as { dimensions: number }).dimensions)).toEqual([
      256, 256, 256,
    ]);
  });

  it("cuts a long text rather than sending it whole", async () => {
    const server = await titan([{ body: { embedding: [1] } }]);
    const embedder = new BedrockTitanEmbedder({ client: testBedrockClient(server.url) });
    await embedder.embed(["x".repeat(5000)]);
    expect((server.requests[0].body as { inputText: string }).inputText.length).toBeLessThan(1000);
  });

  it("refuses a reply that is not a finite vector, naming where", async () => {
    const server = await titan([{ body: { embedding: ["1", 2] } }, { body: { vector: [1] } }]);
    const embedder = new BedrockTitanEmbedder({ client: testBedrockClient(server.url) });
    await expect(embedder.embed(["a"])).rejects.toThrow(/not embeddings \(at embedding\.0\)/);
    await expect(embedder.embed(["a"])).rejects.toBeInstanceOf(InvalidModelOutputError);
  });

  it("fails at once on a permission error and retries throttling as the SDK does", async () => {
    const denied = await titan([
      { status: 403, body: { message: "no" }, headers: { "x-amzn-errortype": "AccessDenied" } },
    ]);
    const failure = await new BedrockTitanEmbedder({ client: testBedrockClient(denied.url, 3) })
      .embed(["a"])
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(LLMError);
    expect((failure as LLMError).retryable).toBe(false);
    expect((failure as LLMError).message).toMatch(/not retryable: the provider denied access/);
    expect(denied.requests).toHaveLength(1);

    const throttled = await titan([
      {
        status: 429,
        body: { message: "slow down" },
        headers: { "x-amzn-errortype": "ThrottlingException" },
      },
      { body: { embedding: [0.5, 0.5] } },
    ]);
    const embedder = new BedrockTitanEmbedder({ client: testBedrockClient(throttled.url, 2) });
    await expect(embedder.embed(["a"])).resolves.toEqual([[0.5, 0.5]]);
    expect(throttled.requests).toHaveLength(2);
  });

  it("refuses dimensions Titan does not have", () => {
    expect(() => new BedrockTitanEmbedder({ dimensions: 300 as 256 })).toThrow(
      /dimensions must be 256, 512 or 1024 \(got 300\)/,
    );
  });
});

describe("OpenAIEmbedder on a scripted /v1/embeddings", () => {
  const reply = (vectors: number[][], order = vectors.map((_, i) => i)) => ({
    object: "list",
    model: "m",
    data: order.map((index) => ({ object: "embedding", index, embedding: vectors[index] })),
  });

  it("sends the batch in one call and puts the vectors back in input order", async () => {
    const server = await embeddings([
      {
        body: reply(
          [
            [1, 0],
            [0, 1],
          ],
          [1, 0],
        ),
      },
    ]);
    const embedder = new OpenAIEmbedder({ model: "m", client: openAIClient(server.url) });
    await expect(embedder.embed(["a", "b"])).resolves.toEqual([
      [1, 0],
      [0, 1],
    ]);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].body).toMatchObject({
      model: "m",
      input: ["a", "b"],
      encoding_format: "float",
    });
  });

  it("refuses a reply with a vector missing or of another length", async () => {
    const server = await embeddings([
      { body: reply([[1, 0]]) },
      {
        body: reply([
          [1, 0],
          [1, 0, 0],
        ]),
      },
    ]);
    const embedder = new OpenAIEmbedder({ model: "m", client: openAIClient(server.url) });
    await expect(embedder.embed(["a", "b"])).rejects.toThrow(/has 1 vectors for 2 texts/);
    await expect(embedder.embed(["a", "b"])).rejects.toThrow(/vectors differ in length/);
  });

  it("retries a 429 with retry-after and does not retry a 401", async () => {
    const server = await embeddings([
      { status: 429, headers: { "retry-after-ms": "10" }, body: { error: { message: "slow" } } },
      { body: reply([[1]]) },
      { status: 401, body: { error: { message: "bad key" } } },
    ]);
    const embedder = new OpenAIEmbedder({ model: "m", client: openAIClient(server.url, 2) });
    await expect(embedder.embed(["a"])).resolves.toEqual([[1]]);
    const failure = await embedder.embed(["a"]).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(LLMError);
    expect((failure as LLMError).status).toBe(401);
    expect((failure as LLMError).retryable).toBe(false);
    expect(server.requests).toHaveLength(3);
  });

  it("asks nothing for no texts", async () => {
    const server = await embeddings([]);
    const embedder = new OpenAIEmbedder({ model: "m", client: openAIClient(server.url) });
    await expect(embedder.embed([])).resolves.toEqual([]);
    expect(server.requests).toHaveLength(0);
  });
});
